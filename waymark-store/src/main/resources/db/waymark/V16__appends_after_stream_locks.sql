-- Appends inside a transaction that already has its transaction id, when the transaction locked
-- the appended streams before it got that id (issue 29, item 2).
--
-- Until now append_events refused to run once the transaction held an xid (WM001), so that it
-- could take its stream locks before the xid existed. A transaction gets its xid at its first
-- write, but also at SELECT ... FOR UPDATE/SHARE, at CREATE TEMP TABLE, and at nextval() when the
-- sequence logs ahead (about one call in 32): appends after those were refused, some of them at
-- random. Now a transaction may take the stream locks first (lock_streams, as its first
-- statement; EventStore.inTransaction does so when it runs a refused work again), and append to
-- those streams after any other statement.
--
-- Ordering argument (DESIGN decision 1: each stream's version order must agree with the global
-- order (tx_id, global_position)). What the argument needs is not "no xid when append_events runs"
-- but: every transaction that writes events of stream S received its xid while it held S's lock.
-- Take two such transactions A and B writing S, A first (A holds S's lock first). B gets the lock
-- only after A committed or rolled back, and gets its xid only while holding the lock, so after A
-- ended. Xids are handed out in increasing order and A had its xid before it ended, so
-- xid(A) < xid(B): B's versions, which come after A's, also come after them in the global order.
-- Within one transaction the versions of S are written in increasing global_position (one
-- sequence, one session), so the order holds there too. Readers only return events below
-- pg_snapshot_xmin, so neither A nor B is visible out of order or skipped.
--
-- The rule therefore is: a stream lock counts for an append only if it was taken while the
-- transaction had no xid. Both places that take stream locks record the keys they took without an
-- xid in the transaction-local setting waymark.stream_locks (',key,key,...,'): lock_streams, which
-- refuses to run once there is an xid, and append_events, which locks before its first write. When
-- append_events finds an xid, it accepts the append only if every key of the append is recorded
-- there, and refuses it (WM001) otherwise. The setting and the locks share their life: both end
-- with the transaction, and both are undone by ROLLBACK TO SAVEPOINT of the subtransaction that
-- took them. (A session could forge the setting with SET LOCAL: that is deliberate misuse of an
-- internal name, as calling pg_advisory_xact_unlock would be.)
--
-- The keys are the ones append_events has always locked: hashtextextended('<schema>/' || stream, 0).
-- The locks of several streams are taken in ascending key order, as before, so that two
-- multi-stream appends cannot deadlock on each other's stream locks.

CREATE FUNCTION "${flyway:defaultSchema}".lock_streams(p_streams text[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_key bigint;
  v_held text := coalesce(nullif(current_setting('waymark.stream_locks', true), ''), ',');
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = format('stream locks refused: the transaction already has transaction id %s',
                       pg_current_xact_id_if_assigned()),
      HINT = 'lock the streams as the first statement of the transaction';
  END IF;
  FOR v_key IN
    SELECT DISTINCT hashtextextended('${flyway:defaultSchema}/' || s, 0) FROM unnest(p_streams) AS s ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(v_key);
    IF strpos(v_held, ',' || v_key || ',') = 0 THEN
      v_held := v_held || v_key || ',';
    END IF;
  END LOOP;
  PERFORM set_config('waymark.stream_locks', v_held, true);
END
$$;

-- Same signature, arguments and results as version 1; see there for the encoding. Changed: the
-- refusal after an xid (WM001) now applies only to streams not locked before the xid, and the
-- locks taken here are recorded for later appends of the same transaction. CREATE OR REPLACE
-- drops the settings that versions 8 and 10 attached, so they are given again.
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".append_events(
  p_streams text[], p_expected bigint[], p_counts integer[],
  p_event_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[],
  p_causation uuid[], p_correlation uuid[], p_created_at timestamptz)
RETURNS bigint[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_xid xid8 := pg_current_xact_id_if_assigned();
  v_key bigint;
  v_held text;
  v_offset integer := 0;
  v_stream text;
  v_expected bigint;
  v_n integer;
  v_id bigint;
  v_version bigint;
  v_deleted timestamptz;
  v_first bigint;
  v_last bigint;
  v_out bigint[];
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM002',
      MESSAGE = format('append refused: isolation level is %s', current_setting('transaction_isolation')),
      HINT = 'run appends at READ COMMITTED';
  END IF;

  v_held := coalesce(nullif(current_setting('waymark.stream_locks', true), ''), ',');
  IF v_xid IS NOT NULL THEN
    -- The transaction has its xid already: only locks taken before it count (see the header).
    FOR i IN 1 .. array_length(p_streams, 1) LOOP
      IF strpos(v_held, ',' || hashtextextended('${flyway:defaultSchema}/' || p_streams[i], 0) || ',') = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'WM001',
          MESSAGE = format('append refused: the transaction already has transaction id %s and did not lock'
                           ' stream %L before it got it', v_xid, p_streams[i]),
          DETAIL = json_build_object('index', i - 1, 'xid', v_xid::text)::text,
          HINT = 'append before any statement that gives the transaction an id, or lock the streams first (lock_streams)';
      END IF;
    END LOOP;
  ELSIF array_length(p_streams, 1) = 1 THEN
    v_key := hashtextextended('${flyway:defaultSchema}/' || p_streams[1], 0);
    PERFORM pg_advisory_xact_lock(v_key);
    IF strpos(v_held, ',' || v_key || ',') = 0 THEN
      PERFORM set_config('waymark.stream_locks', v_held || v_key || ',', true);
    END IF;
  ELSE
    FOR v_key IN
      SELECT DISTINCT hashtextextended('${flyway:defaultSchema}/' || s, 0) FROM unnest(p_streams) AS s ORDER BY 1
    LOOP
      PERFORM pg_advisory_xact_lock(v_key);
      IF strpos(v_held, ',' || v_key || ',') = 0 THEN
        v_held := v_held || v_key || ',';
      END IF;
    END LOOP;
    PERFORM set_config('waymark.stream_locks', v_held, true);
  END IF;

  v_out := ARRAY[]::bigint[];

  FOR i IN 1 .. array_length(p_streams, 1) LOOP
    v_stream := p_streams[i];
    v_expected := p_expected[i];
    v_n := p_counts[i];

    SELECT s.stream_id, s.deleted_at,
           COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                      WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0)
      INTO v_id, v_deleted, v_version
      FROM "${flyway:defaultSchema}".streams s WHERE s.stream_name = v_stream;

    IF NOT FOUND THEN
      IF v_expected = -3 THEN
        RAISE EXCEPTION USING ERRCODE = 'WM011', MESSAGE = 'stream not found',
          DETAIL = json_build_object('index', i - 1, 'actual', -1, 'deleted', false)::text;
      ELSIF v_expected >= 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'WM010', MESSAGE = 'wrong expected version',
          DETAIL = json_build_object('index', i - 1, 'actual', -1, 'deleted', false)::text;
      END IF;
      INSERT INTO "${flyway:defaultSchema}".streams (stream_name, category, stream_hash)
        VALUES (v_stream, split_part(v_stream, '-', 1), "${flyway:defaultSchema}".stream_hash(v_stream))
        RETURNING stream_id INTO v_id;
      v_version := 0;
    ELSE
      IF v_expected = -2 THEN
        RAISE EXCEPTION USING ERRCODE = 'WM012', MESSAGE = 'stream already exists',
          DETAIL = json_build_object('index', i - 1, 'actual', v_version, 'deleted', v_deleted IS NOT NULL)::text;
      ELSIF v_deleted IS NOT NULL AND v_expected IN (-1, -3) THEN
        RAISE EXCEPTION USING ERRCODE = 'WM011', MESSAGE = 'stream is deleted',
          DETAIL = json_build_object('index', i - 1, 'actual', v_version, 'deleted', true)::text;
      ELSIF v_expected >= 0 AND (v_deleted IS NOT NULL OR v_expected <> v_version) THEN
        RAISE EXCEPTION USING ERRCODE = 'WM010', MESSAGE = 'wrong expected version',
          DETAIL = json_build_object('index', i - 1, 'actual', v_version, 'deleted', v_deleted IS NOT NULL)::text;
      END IF;
    END IF;

    IF v_n = 1 THEN
      INSERT INTO "${flyway:defaultSchema}".events
        (event_id, stream_id, stream_version, category, event_type, data, metadata,
         causation_id, correlation_id, created_at)
      VALUES (p_event_ids[v_offset + 1], v_id, v_version + 1, split_part(v_stream, '-', 1),
              p_types[v_offset + 1], p_data[v_offset + 1], p_metadata[v_offset + 1],
              p_causation[v_offset + 1], p_correlation[v_offset + 1], p_created_at)
      RETURNING global_position INTO v_first;
      v_last := v_first;
    ELSE
      WITH inserted AS (
        INSERT INTO "${flyway:defaultSchema}".events
          (event_id, stream_id, stream_version, category, event_type, data, metadata,
           causation_id, correlation_id, created_at)
        SELECT p_event_ids[j], v_id, v_version + (j - v_offset), split_part(v_stream, '-', 1),
               p_types[j], p_data[j], p_metadata[j], p_causation[j], p_correlation[j], p_created_at
          FROM generate_series(v_offset + 1, v_offset + v_n) AS j
         ORDER BY j
        RETURNING global_position
      )
      SELECT min(global_position), max(global_position) INTO v_first, v_last FROM inserted;
    END IF;

    v_out := v_out || ARRAY[v_id, v_version + v_n, v_first, v_last];
    v_offset := v_offset + v_n;
  END LOOP;
  RETURN ARRAY[pg_current_xact_id()::text::bigint] || v_out;
END
$$;

ALTER FUNCTION "${flyway:defaultSchema}".lock_streams SET jit = off;
