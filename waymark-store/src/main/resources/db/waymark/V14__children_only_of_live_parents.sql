-- Waymark, version 14: a child is never created after its parent was cancelled.
--
-- A cancellation commits the parent's terminal marker under the parent's lock and then cancels the
-- parent's live children, each in a transaction of its own. A body that had not yet noticed its
-- cancellation could still spawn a child afterwards: the child's start took only the child's own
-- lock, so it committed after the cascade had read the parent's children, and it ran on. The run
-- cancelled such a child when its next journal write found the parent cancelled, but a parent
-- process that died in between left the child running with nobody to cancel it. Now a child's
-- start also takes the parent's lock (try-taken in a batch, like a child's completion; the lock
-- order is the child's, then the parent's, as there) and wf_create refuses it with {parent_ended,
-- parent status or 'missing', NULL, NULL} unless the parent is running or suspended. A start of an
-- existing instance (attaching to it) takes no parent lock and is answered as before.
-- wf_start and wf_journal keep their settings (version 8's, and version 10's jit = off), now in
-- their definitions. Same signatures and outcomes otherwise.
-- wf_orphaned_children (new): the live children of cancelled instances, for the resume worker to
-- cancel (a cascade a crash cut short); garbage collection keeps a cancelled instance while it has
-- live children, so that they stay findable.

CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_create(
  p_name text, p_id text, p_input jsonb, p_event_id uuid,
  p_parent_name text, p_parent_id text, p_owner text, p_ttl_ms bigint)
RETURNS text[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_status text;
  v_input jsonb;
  v_stream text;
  v_stream_id bigint;
  v_epoch bigint := 0;
  v_parent_status text;
BEGIN
  SELECT status, input INTO v_status, v_input
    FROM "${flyway:defaultSchema}".workflows WHERE name = p_name AND id = p_id;
  IF FOUND THEN
    RETURN ARRAY['exists', v_status, v_input::text, NULL];
  END IF;
  IF p_parent_id IS NOT NULL THEN
    -- A child is created only while its parent lives: the caller holds the parent's lock, which a
    -- cancellation of the parent takes too, so the cancellation either comes first (and is seen
    -- here) or finds this child among the parent's live children when it cascades.
    SELECT status INTO v_parent_status
      FROM "${flyway:defaultSchema}".workflows WHERE name = p_parent_name AND id = p_parent_id;
    IF v_parent_status IS NULL OR v_parent_status NOT IN ('running', 'suspended') THEN
      RETURN ARRAY['parent_ended', coalesce(v_parent_status, 'missing'), NULL, NULL];
    END IF;
  END IF;
  v_stream := "${flyway:defaultSchema}".wf_stream(p_name, p_id, 0);
  INSERT INTO "${flyway:defaultSchema}".streams (stream_name, category, stream_hash)
    VALUES (v_stream, '$wf', "${flyway:defaultSchema}".stream_hash(v_stream))
    ON CONFLICT (stream_name) DO NOTHING
    RETURNING stream_id INTO v_stream_id;
  IF FOUND THEN
    INSERT INTO "${flyway:defaultSchema}".events
      (event_id, stream_id, stream_version, category, event_type, data, created_at)
    VALUES (p_event_id, v_stream_id, 1, '$wf', 'WorkflowStarted',
            jsonb_build_object('input', p_input, 'generation', 0), now());
  ELSE -- a stream of that name outlived its instance row: append to it with the store's checks
    PERFORM "${flyway:defaultSchema}".append_events(
      ARRAY[v_stream], ARRAY[-1::bigint], ARRAY[1], ARRAY[p_event_id], ARRAY['WorkflowStarted'],
      ARRAY[jsonb_build_object('input', p_input, 'generation', 0)], ARRAY[NULL::jsonb],
      ARRAY[NULL::uuid], ARRAY[NULL::uuid], now());
  END IF;
  IF p_owner IS NOT NULL THEN
    v_epoch := nextval('"${flyway:defaultSchema}".workflow_lease_epochs');
  END IF;
  INSERT INTO "${flyway:defaultSchema}".workflows
    (name, id, status, input, parent_name, parent_id, lease_owner, lease_epoch, lease_expires_at)
  VALUES (p_name, p_id, 'running', p_input, p_parent_name, p_parent_id, p_owner, v_epoch,
          CASE WHEN p_owner IS NULL THEN NULL ELSE now() + p_ttl_ms * interval '1 millisecond' END);
  RETURN ARRAY['created', 'running', NULL, v_epoch::text];
END
$$;

CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_start(
  p_name text, p_id text, p_input jsonb, p_event_id uuid,
  p_parent_name text, p_parent_id text, p_owner text, p_ttl_ms bigint)
RETURNS text[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = format('append refused: the transaction already wrote (xid %s) before appending',
                       pg_current_xact_id_if_assigned()),
      HINT = 'append events before any other write of the transaction, so the global order stays gap-free for readers';
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM002',
      MESSAGE = format('append refused: isolation level is %s', current_setting('transaction_isolation')),
      HINT = 'run appends at READ COMMITTED';
  END IF;
  IF pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || p_name || '#' || p_id, 0)) IS NULL THEN
    NULL; -- the condition only takes the lock
  END IF;
  -- A child's creation takes its parent's lock too (see wf_create); a start of an existing instance
  -- (which the child's lock keeps existing) is answered without it, so attaching never waits for
  -- the parent.
  IF p_parent_id IS NOT NULL THEN -- nested: a start without a parent runs no query here
    IF NOT EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows w WHERE w.name = p_name AND w.id = p_id) THEN
      PERFORM pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || p_parent_name || '#' || p_parent_id, 0));
    END IF;
  END IF;
  RETURN "${flyway:defaultSchema}".wf_create(p_name, p_id, p_input, p_event_id, p_parent_name, p_parent_id,
                                             p_owner, p_ttl_ms);
END
$$;

CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_journal(
  p_names text[], p_ids text[], p_gens integer[], p_event_ids uuid[], p_types text[], p_data jsonb[],
  p_epochs bigint[], p_terminals text[], p_results jsonb[],
  p_parent_names text[], p_parent_ids text[], p_owners text[], p_ttls bigint[])
RETURNS text[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
DECLARE
  v_n integer := coalesce(array_length(p_names, 1), 0);
  v_locked boolean[] := array_fill(false, ARRAY[greatest(v_n, 1)]);
  v_keys bigint[] := '{}';
  v_fast boolean[] := array_fill(false, ARRAY[greatest(v_n, 1)]);
  v_first integer;
  v_written uuid[] := '{}';
  v_out text[] := '{}';
  v_parent_name text;
  v_parent_id text;
  v_completions boolean := false;
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = 'wf_journal refused: the transaction already wrote before journaling';
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM002',
      MESSAGE = format('wf_journal refused: isolation level is %s', current_setting('transaction_isolation'));
  END IF;
  -- Every lock before the first write (see version 5). v_fast marks the fenced steps, and the
  -- fenced completions of instances without a parent, of instances named by no other entry of the
  -- batch (an advisory lock is reentrant, so a second entry of an instance also gets it: such
  -- entries are found by their lock key and all take the entry-by-entry path, in batch order).
  FOR i IN 1 .. v_n LOOP
    v_keys[i] := hashtextextended('${flyway:defaultSchema}#wf#' || p_names[i] || '#' || p_ids[i], 0);
    v_locked[i] := pg_try_advisory_xact_lock(v_keys[i]);
    v_first := array_position(v_keys, v_keys[i]);
    v_parent_id := NULL;
    IF v_locked[i] AND p_terminals[i] IS NOT NULL THEN
      SELECT w.parent_name, w.parent_id INTO v_parent_name, v_parent_id
        FROM "${flyway:defaultSchema}".workflows w WHERE w.name = p_names[i] AND w.id = p_ids[i];
      IF v_parent_id IS NOT NULL THEN -- a parent never changes: read before its lock is fine
        v_locked[i] := pg_try_advisory_xact_lock(
          hashtextextended('${flyway:defaultSchema}#wf#' || v_parent_name || '#' || v_parent_id, 0));
      END IF;
    ELSIF v_locked[i] AND p_types[i] = 'WorkflowStarted' AND p_parent_ids[i] IS NOT NULL THEN
      -- a child's creation: its parent's lock too, under which wf_create reads the parent's status
      -- (a start of an existing instance, which the child's lock keeps existing, needs none). The
      -- query is nested: in the ELSIF's condition it would make PL/pgSQL run that condition through
      -- the executor for every entry of every batch, steps included.
      IF NOT EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows w
                      WHERE w.name = p_names[i] AND w.id = p_ids[i]) THEN
        v_locked[i] := pg_try_advisory_xact_lock(
          hashtextextended('${flyway:defaultSchema}#wf#' || p_parent_names[i] || '#' || p_parent_ids[i], 0));
      END IF;
    END IF;
    IF v_first < i THEN
      v_fast[v_first] := false;
    ELSIF v_locked[i] AND p_epochs[i] IS NOT NULL AND p_types[i] <> 'WorkflowStarted'
          AND (p_terminals[i] IS NULL OR (p_terminals[i] = 'completed' AND v_parent_id IS NULL)) THEN
      v_fast[i] := true;
      v_completions := v_completions OR p_terminals[i] IS NOT NULL;
    END IF;
  END LOOP;
  IF true = ANY (v_fast) THEN
    -- The marked entries, all at once: each is inserted exactly when version 5's one-statement path
    -- of wf_append would insert a step (instance found at this epoch, running, at this generation, its
    -- stream present, no entry with this id), with the same stream version. Marked entries are of
    -- distinct instances, and an entry id derives from its instance, so a returned id names one
    -- marked entry. Entries this statement did not write were not written at all and take the
    -- entry-by-entry path below, exactly as in version 5.
    WITH written AS (
      INSERT INTO "${flyway:defaultSchema}".events
        (event_id, stream_id, stream_version, category, event_type, data, created_at)
      SELECT x.event_id, s.stream_id,
             COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                        WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0) + 1,
             '$wf', x.type, x.data, now()
        FROM unnest(p_names, p_ids, p_gens, p_event_ids, p_types, p_data, p_epochs, v_fast)
             WITH ORDINALITY AS x(name, id, gen, event_id, type, data, epoch, fast, ord)
        CROSS JOIN LATERAL (SELECT w.lease_epoch, w.status, w.generation
                              FROM "${flyway:defaultSchema}".workflows w
                             WHERE w.name = x.name AND w.id = x.id OFFSET 0) w
        CROSS JOIN LATERAL (SELECT s.stream_id FROM "${flyway:defaultSchema}".streams s
                             WHERE s.stream_name = "${flyway:defaultSchema}".wf_stream(x.name, x.id, x.gen)
                            OFFSET 0) s
       WHERE x.fast AND w.lease_epoch = x.epoch AND w.status = 'running' AND w.generation = x.gen
         AND NOT EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".events e WHERE e.event_id = x.event_id OFFSET 0)
       ORDER BY x.ord
      RETURNING event_id
    )
    SELECT coalesce(array_agg(written.event_id), '{}') INTO v_written FROM written;
  END IF;
  IF v_completions THEN
    -- The completions written above: what wf_append does after writing a completion of an instance
    -- without a parent (the instance closes and releases its lease, pending awakeables are abandoned).
    UPDATE "${flyway:defaultSchema}".workflows w
       SET status = 'completed', result = x.result, failure = NULL, waiting_on = NULL,
           wake_after = NULL, next_attempt_at = NULL, updated_at = now(), completed_at = now(),
           lease_owner = NULL, lease_expires_at = NULL, attempts = 0, last_error = NULL
      FROM unnest(p_names, p_ids, p_event_ids, p_terminals, p_results) AS x(name, id, event_id, terminal, result)
     WHERE x.terminal = 'completed' AND x.event_id = ANY (v_written) AND w.name = x.name AND w.id = x.id;
    UPDATE "${flyway:defaultSchema}".workflow_awakeables a
       SET status = 'abandoned', completed_at = now()
      FROM unnest(p_names, p_ids, p_event_ids, p_terminals) AS x(name, id, event_id, terminal)
     WHERE x.terminal = 'completed' AND x.event_id = ANY (v_written) AND a.name = x.name AND a.id = x.id
       AND a.status = 'pending';
  END IF;
  FOR i IN 1 .. v_n LOOP
    IF NOT v_locked[i] THEN
      v_out := v_out || ARRAY['busy', NULL, NULL, NULL];
    ELSIF v_fast[i] AND p_event_ids[i] = ANY (v_written) THEN
      v_out := v_out || ARRAY['appended', NULL, NULL, NULL];
    ELSIF p_types[i] = 'WorkflowStarted' THEN
      v_out := v_out || "${flyway:defaultSchema}".wf_create(p_names[i], p_ids[i], p_data[i], p_event_ids[i],
        p_parent_names[i], p_parent_ids[i], p_owners[i], p_ttls[i]);
    ELSE
      v_out := v_out || "${flyway:defaultSchema}".wf_append(p_names[i], p_ids[i], p_gens[i], p_event_ids[i],
        p_types[i], p_data[i], p_epochs[i], p_terminals[i], p_results[i], NULL) || ARRAY[NULL, NULL]::text[];
    END IF;
  END LOOP;
  RETURN v_out;
END
$$;

-- As in version 11, and a cancelled instance is kept while it has live children: the resume worker
-- finds the children a cut-short cascade left by their cancelled parent (wf_orphaned_children below),
-- which collecting the parent first would hide for good.
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_gc_candidates(p_retention interval, p_limit integer)
RETURNS TABLE (name text, id text, status text, completed_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
  IF p_retention < interval '0' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM003', MESSAGE = format('retention must not be negative, got %s', p_retention);
  END IF;
  RETURN QUERY
    SELECT w.name, w.id, w.status, w.completed_at
      FROM "${flyway:defaultSchema}".workflows w
     WHERE w.status IN ('completed', 'cancelled', 'failed')
       AND w.completed_at <= now() - p_retention
       AND NOT EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows p
                        WHERE w.parent_id IS NOT NULL AND p.name = w.parent_name AND p.id = w.parent_id
                          AND p.status IN ('running', 'suspended', 'failed') OFFSET 0)
       AND NOT (w.status = 'cancelled'
                AND EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows c
                             WHERE c.parent_name = w.name AND c.parent_id = w.id
                               AND c.status IN ('running', 'suspended') OFFSET 0))
     ORDER BY w.completed_at
     LIMIT p_limit;
END
$$;

-- As in version 11, with the same rule as wf_gc_candidates above.
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_collect(p_name text, p_id text, p_retention interval)
RETURNS text
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
DECLARE
  v_row "${flyway:defaultSchema}".workflows;
  v_streams bigint[];
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || p_name || '#' || p_id, 0)) THEN
    RETURN 'busy';
  END IF;
  -- FOR UPDATE: a writer that does not take the instance lock (a retry's UPDATE) either commits
  -- first, and this sees its row (running: kept), or waits for this transaction and finds no row.
  SELECT * INTO v_row FROM "${flyway:defaultSchema}".workflows w WHERE w.name = p_name AND w.id = p_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'missing';
  END IF;
  IF v_row.status NOT IN ('completed', 'cancelled', 'failed') OR v_row.completed_at IS NULL
     OR v_row.completed_at > now() - p_retention
     OR EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows p
                 WHERE v_row.parent_id IS NOT NULL AND p.name = v_row.parent_name AND p.id = v_row.parent_id
                   AND p.status IN ('running', 'suspended', 'failed') OFFSET 0)
     OR (v_row.status = 'cancelled'
         AND EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows c
                      WHERE c.parent_name = p_name AND c.parent_id = p_id
                        AND c.status IN ('running', 'suspended') OFFSET 0)) THEN
    RETURN 'kept';
  END IF;
  SELECT coalesce(array_agg(s.stream_id), '{}') INTO v_streams
    FROM generate_series(0, v_row.generation) AS g
    CROSS JOIN LATERAL (SELECT s.stream_id FROM "${flyway:defaultSchema}".streams s
                         WHERE s.stream_name = "${flyway:defaultSchema}".wf_stream(p_name, p_id, g) OFFSET 0) s;
  DELETE FROM "${flyway:defaultSchema}".events e WHERE e.stream_id = ANY (v_streams);
  DELETE FROM "${flyway:defaultSchema}".streams s WHERE s.stream_id = ANY (v_streams);
  DELETE FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.name = p_name AND a.id = p_id;
  DELETE FROM "${flyway:defaultSchema}".workflows w WHERE w.name = p_name AND w.id = p_id;
  RETURN 'deleted';
END
$$;

-- A cascade that did not finish: the live children of cancelled instances, up to p_limit. A
-- cancellation commits the parent's marker first and cancels the children after it, each in a
-- transaction of its own, so a process that dies in between leaves children running; the resume
-- worker asks for them now and then (every minute by default) and cancels them. Walks the index of
-- active instances (the children still to cancel are among them; left alone, the planner walked
-- every finished instance looking for cancelled parents) and probes each parent by its key, as the
-- lateral subquery forces (about 50 ms for 200,000 active instances here).
CREATE FUNCTION "${flyway:defaultSchema}".wf_orphaned_children(p_limit integer)
RETURNS TABLE (name text, id text, parent_name text, parent_id text)
LANGUAGE sql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $$
  SELECT c.name, c.id, c.parent_name, c.parent_id
    FROM "${flyway:defaultSchema}".workflows c
   CROSS JOIN LATERAL (SELECT p.status FROM "${flyway:defaultSchema}".workflows p
                        WHERE p.name = c.parent_name AND p.id = c.parent_id OFFSET 0) p
   WHERE c.status IN ('running', 'suspended') AND c.parent_id IS NOT NULL AND p.status = 'cancelled'
   LIMIT p_limit
$$;
