-- Group commit of concurrent appends (issue 31): append_batch writes many independent appends
-- (single or multi-stream, of different callers) in one statement of one transaction, and returns
-- an outcome per append instead of raising, so one caller's conflict never aborts its neighbours.
--
-- Input (the Java side, AppendBatchSql, builds it):
--   p_names        the distinct stream names of the batch
--   p_item_slots   per append ("item"), in call order: how many streams ("slots") it writes
--   p_slot_name    per slot, in item order: the index of its stream in p_names (1-based)
--   p_expected     per slot: the expected version (-1 any, -2 no stream, -3 stream exists, n >= 0 exactly n)
--   p_counts       per slot: its number of events
--   p_created      per slot: the created_at of its events
--   p_event_ids .. p_correlation: every slot's events back to back, in slot order
-- Output: a flat bigint array (markedly cheaper per call than a set-returning function): the
-- transaction id (0 when nothing was written), then per item its status and three values per slot:
--   status 0 ok:             per slot (version after the append, first position, last position)
--   status 1 wrong version,  2 stream not found (or deleted), 3 stream already exists: the first
--                            slot holds (index of the failing stream in the append, actual version
--                            or -1, 1 when deleted else 0), the other slots 0
--   status 4 lock busy, 5 an event id is already stored: nothing written; the caller appends alone
-- Status 1 to 3 are exactly the conflicts append_events raises as WM010, WM011 and WM012.
--
-- Ordering argument (DESIGN decision 1, the rule of V16): every transaction that writes events of
-- stream S must receive its transaction id while it holds S's lock. append_batch takes the lock of
-- every stream of the batch before its first write, so the batch gets its xid only after all of
-- them are held; an append whose lock it could not take writes nothing. Within the batch the events
-- are inserted in call order, by one statement, so two appends to one stream get consecutive
-- versions in call order and increasing positions: per-stream order agrees with the global order.
-- Readers only return events below pg_snapshot_xmin, as for any other append.
--
-- The batch only try-locks (pg_try_advisory_xact_lock), and never waits for a stream lock while
-- holding another: a batch holds many streams' locks, so waiting could close a deadlock cycle with
-- an application transaction that appends to two streams one after the other, which a single
-- append never could. An append whose stream is busy (another handle, an inTransaction caller)
-- gets status 4 and the caller appends alone, waiting for the lock as always.
--
-- Versions are read once, for all streams after their locks, and carried forward in memory from
-- append to append of the batch; an id already stored is found by one lookup before any insert
-- (a concurrent transaction inserting the same id can still fail the whole statement: the store
-- then runs every append of the batch alone).
CREATE FUNCTION "${flyway:defaultSchema}".append_batch(
  p_names text[], p_item_slots integer[], p_slot_name integer[], p_expected bigint[], p_counts integer[],
  p_created timestamptz[], p_event_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[],
  p_causation uuid[], p_correlation uuid[])
RETURNS bigint[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_key bigint;
  v_new_id bigint;
  v_k integer;
  v_locked boolean[];
  v_id bigint[];
  v_version bigint[];
  v_deleted boolean[];
  v_dups uuid[];
  v_slot_ok boolean[];
  v_slot_id bigint[];
  v_slot_base bigint[];
  v_slot_offset integer[];
  v_event_slot integer[];
  v_positions bigint[];
  v_status integer;
  v_conflict bigint[];
  v_slot integer := 0;
  v_event integer := 0;
  v_first_slot integer;
  v_first_event integer;
  v_n integer;
  v_expected bigint;
  v_pos integer := 1;
  v_out bigint[] := ARRAY[]::bigint[];
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = format('append batch refused: the transaction already has transaction id %s',
                       pg_current_xact_id_if_assigned()),
      HINT = 'append_batch runs as the first statement of a transaction of its own';
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM002',
      MESSAGE = format('append refused: isolation level is %s', current_setting('transaction_isolation')),
      HINT = 'run appends at READ COMMITTED';
  END IF;

  -- Locks first, in ascending key order, none waited for (see the header).
  v_locked := array_fill(false, ARRAY[array_length(p_names, 1)]);
  FOR v_k, v_key IN
    SELECT n.ord, hashtextextended('${flyway:defaultSchema}/' || n.name, 0)
      FROM unnest(p_names) WITH ORDINALITY AS n(name, ord) ORDER BY 2
  LOOP
    v_locked[v_k] := pg_try_advisory_xact_lock(v_key);
  END LOOP;

  -- Every stream's state, read after the locks (a new snapshot per statement at READ COMMITTED).
  SELECT array_agg(s.stream_id ORDER BY n.ord), array_agg(v.version ORDER BY n.ord),
         array_agg(s.deleted_at IS NOT NULL ORDER BY n.ord)
    INTO v_id, v_version, v_deleted
    FROM unnest(p_names) WITH ORDINALITY AS n(name, ord)
    LEFT JOIN "${flyway:defaultSchema}".streams s ON s.stream_name = n.name
    LEFT JOIN LATERAL (SELECT COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                                         WHERE e.stream_id = s.stream_id
                                         ORDER BY e.stream_version DESC LIMIT 1), 0) AS version) v ON true;

  SELECT array_agg(e.event_id) INTO v_dups
    FROM "${flyway:defaultSchema}".events e WHERE e.event_id = ANY (p_event_ids);

  v_slot_ok := array_fill(false, ARRAY[array_length(p_slot_name, 1)]);
  v_slot_id := array_fill(NULL::bigint, ARRAY[array_length(p_slot_name, 1)]);
  v_slot_base := array_fill(0::bigint, ARRAY[array_length(p_slot_name, 1)]);
  v_slot_offset := array_fill(0, ARRAY[array_length(p_slot_name, 1)]);
  v_event_slot := array_fill(0, ARRAY[array_length(p_event_ids, 1)]);

  FOR v_item IN 1 .. array_length(p_item_slots, 1) LOOP
    v_first_slot := v_slot + 1;
    v_first_event := v_event + 1;
    v_n := 0;
    FOR s IN v_first_slot .. v_slot + p_item_slots[v_item] LOOP
      v_slot_offset[s] := v_event + v_n;
      FOR j IN v_event + v_n + 1 .. v_event + v_n + p_counts[s] LOOP
        v_event_slot[j] := s;
      END LOOP;
      v_n := v_n + p_counts[s];
    END LOOP;
    v_slot := v_slot + p_item_slots[v_item];
    v_event := v_event + v_n;
    v_status := 0;
    v_conflict := NULL;

    FOR s IN v_first_slot .. v_slot LOOP
      IF NOT v_locked[p_slot_name[s]] THEN
        v_status := 4;
        EXIT;
      END IF;
    END LOOP;
    IF v_status = 0 AND v_dups IS NOT NULL AND p_event_ids[v_first_event:v_event] && v_dups THEN
      v_status := 5;
    END IF;

    -- The conditions, as append_events checks them, against the versions so far in this batch.
    IF v_status = 0 THEN
      FOR s IN v_first_slot .. v_slot LOOP
        v_k := p_slot_name[s];
        v_expected := p_expected[s];
        IF v_id[v_k] IS NULL THEN
          IF v_expected = -3 THEN
            v_status := 2;
          ELSIF v_expected >= 0 THEN
            v_status := 1;
          END IF;
          IF v_status <> 0 THEN
            v_conflict := ARRAY[s - v_first_slot, -1, 0];
            EXIT;
          END IF;
        ELSE
          IF v_expected = -2 THEN
            v_status := 3;
          ELSIF v_deleted[v_k] AND v_expected IN (-1, -3) THEN
            v_status := 2;
          ELSIF v_expected >= 0 AND (v_deleted[v_k] OR v_expected <> v_version[v_k]) THEN
            v_status := 1;
          END IF;
          IF v_status <> 0 THEN
            v_conflict := ARRAY[s - v_first_slot, v_version[v_k], CASE WHEN v_deleted[v_k] THEN 1 ELSE 0 END];
            EXIT;
          END IF;
        END IF;
      END LOOP;
    END IF;

    IF v_status = 0 THEN
      FOR s IN v_first_slot .. v_slot LOOP
        v_k := p_slot_name[s];
        IF v_id[v_k] IS NULL THEN
          INSERT INTO "${flyway:defaultSchema}".streams (stream_name, category, stream_hash)
            VALUES (p_names[v_k], split_part(p_names[v_k], '-', 1),
                    "${flyway:defaultSchema}".stream_hash(p_names[v_k]))
            RETURNING stream_id INTO v_new_id;
          v_id[v_k] := v_new_id;
          v_version[v_k] := 0;
          v_deleted[v_k] := false;
        END IF;
        v_slot_ok[s] := true;
        v_slot_id[s] := v_id[v_k];
        v_slot_base[s] := v_version[v_k];
        v_version[v_k] := v_version[v_k] + p_counts[s];
      END LOOP;
      -- a later append of the batch must not reuse these ids either
      v_dups := coalesce(v_dups, ARRAY[]::uuid[]) || p_event_ids[v_first_event:v_event];
    END IF;

    v_out := v_out || v_status::bigint;
    FOR s IN v_first_slot .. v_slot LOOP
      IF s = v_first_slot AND v_conflict IS NOT NULL THEN
        v_out := v_out || v_conflict;
      ELSE
        v_out := v_out || ARRAY[0, 0, 0]::bigint[];
      END IF;
    END LOOP;
  END LOOP;

  -- All events of the accepted appends in one insert, in call order: identity values are drawn in
  -- the order of the sorted rows, so positions increase with the event's place in the batch.
  WITH inserted AS (
    INSERT INTO "${flyway:defaultSchema}".events
      (event_id, stream_id, stream_version, category, event_type, data, metadata,
       causation_id, correlation_id, created_at)
    SELECT p_event_ids[j], v_slot_id[x.s], v_slot_base[x.s] + (j - v_slot_offset[x.s]),
           split_part(p_names[p_slot_name[x.s]], '-', 1), p_types[j], p_data[j], p_metadata[j],
           p_causation[j], p_correlation[j], p_created[x.s]
      FROM generate_series(1, array_length(p_event_ids, 1)) AS j
      CROSS JOIN LATERAL (SELECT v_event_slot[j] AS s) AS x
     WHERE v_slot_ok[x.s]
     ORDER BY j
    RETURNING global_position
  )
  SELECT array_agg(global_position ORDER BY global_position) INTO v_positions FROM inserted;

  -- Fill in (version, first, last) of the accepted slots, walking the positions in slot order.
  v_slot := 0;
  v_k := 1; -- index into v_out: after the xid that is prepended at the end
  FOR v_item IN 1 .. array_length(p_item_slots, 1) LOOP
    v_status := v_out[v_k];
    v_k := v_k + 1;
    FOR s IN v_slot + 1 .. v_slot + p_item_slots[v_item] LOOP
      IF v_status = 0 THEN
        v_out[v_k] := v_slot_base[s] + p_counts[s];
        v_out[v_k + 1] := v_positions[v_pos];
        v_out[v_k + 2] := v_positions[v_pos + p_counts[s] - 1];
        v_pos := v_pos + p_counts[s];
      END IF;
      v_k := v_k + 3;
    END LOOP;
    v_slot := v_slot + p_item_slots[v_item];
  END LOOP;

  RETURN ARRAY[coalesce(pg_current_xact_id_if_assigned()::text::bigint, 0)] || v_out;
END
$$;
