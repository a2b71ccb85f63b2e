-- Waymark, version 8: the plans of the journal and append functions no longer depend on the
-- statistics of the moment they were made. Same signatures, rules and outcomes as before.
-- A session plans a PL/pgSQL statement once and keeps the plan until the next ANALYZE of a table it
-- reads. Version 7's plans, made while the tables were small, could scan whole tables on every batch
-- once they had grown: a hash anti-join over a sequential scan of events for the "no entry with this
-- id" check, or the partial index of active instances for the instance rows (every running row,
-- compared with every entry). Autovacuum re-analyzes a table only after it grew by a tenth, at most
-- once a minute: with 5,000 running instances the workflow benchmark fell from 0.5 to 0.1 of raw
-- commits. Now every lookup is a correlated probe (a lateral subquery by primary key that cannot be
-- flattened, OFFSET 0; the streams and events probes likewise) and the function plans with
-- sequential scans disabled, so each probe uses its unique index whatever the table's size. It also
-- always uses its generic plans: with the lateral lookups the plan cache kept re-planning the batch
-- INSERT for every call (a custom plan looks cheaper for the array lengths at hand), which cost
-- about a third of the throughput at one workflow in flight. The other
-- functions on the append and journal paths (append_events, wf_start, wf_create, wf_append) only
-- look rows up by key: they plan with sequential scans disabled too (about 0.7 us per call).

CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_journal(
  p_names text[], p_ids text[], p_gens integer[], p_event_ids uuid[], p_types text[], p_data jsonb[],
  p_epochs bigint[], p_terminals text[], p_results jsonb[],
  p_parent_names text[], p_parent_ids text[], p_owners text[], p_ttls bigint[])
RETURNS text[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
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

ALTER FUNCTION "${flyway:defaultSchema}".append_events SET enable_seqscan = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_start SET enable_seqscan = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_create SET enable_seqscan = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_append SET enable_seqscan = off;
