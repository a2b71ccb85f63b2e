-- Waymark, version 10: garbage collection of finished workflows.
-- A finished instance (completed, cancelled or failed) keeps its row, its awakeables and the journal
-- streams of every generation until it is collected. Collection deletes all of them, one instance per
-- transaction, once the instance finished at least a retention period ago by the database clock,
-- unless it is a child whose parent is still running or suspended (the parent reads the child's row
-- when it resumes). A collected parent's unfinished children are detached: they run to their end,
-- and their end wakes nobody (wf_wake of a missing row changes nothing). Journal events are deleted
-- from the event store: a subscription that had not read them by then never will. The id can be
-- started again afterwards, as a new instance.

-- Finished instances in the order they finished: the collector's walk.
CREATE INDEX workflows_finished_idx ON "${flyway:defaultSchema}".workflows (completed_at)
  WHERE status IN ('completed', 'cancelled', 'failed');

-- Up to p_limit instances that may be collected now, oldest first.
CREATE FUNCTION "${flyway:defaultSchema}".wf_gc_candidates(p_retention interval, p_limit integer)
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
                          AND p.status IN ('running', 'suspended') OFFSET 0)
     ORDER BY w.completed_at
     LIMIT p_limit;
END
$$;

-- Collects one instance if it may still be collected: its lock is free (an instance being started,
-- journaled or revived holds it: then 'busy', and it stays a candidate), it is finished, it finished
-- at least p_retention ago and no live parent waits on it. Deletes, in this order, the events and
-- stream rows of every generation's journal, its awakeables and its row. Returns 'deleted', 'busy',
-- 'missing' (already gone) or 'kept' (no longer a candidate: revived by a retry, or a live parent).
CREATE FUNCTION "${flyway:defaultSchema}".wf_collect(p_name text, p_id text, p_retention interval)
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
                   AND p.status IN ('running', 'suspended') OFFSET 0) THEN
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

-- Every function here also plans with JIT compilation off: should a statement ever fall back to a
-- disabled plan node, its cost (10^10 and more) would pass jit_above_cost and PostgreSQL would compile
-- it on every execution (measured: a collection pass whose candidates fell back to a sequential scan
-- took 742 ms instead of about 1 ms).

-- The last lookups of instances and awakeables that were plain statements: planned by the driver on
-- small tables, each could scan a whole table once it had grown (see version 9). Same rows and order.
CREATE FUNCTION "${flyway:defaultSchema}".wf_children(p_name text, p_id text, p_live_only boolean)
RETURNS SETOF "${flyway:defaultSchema}".workflows
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
  IF p_live_only THEN
    RETURN QUERY SELECT * FROM "${flyway:defaultSchema}".workflows w
                  WHERE w.parent_name = p_name AND w.parent_id = p_id AND w.parent_id IS NOT NULL
                    AND w.status IN ('running', 'suspended')
                  ORDER BY w.created_at;
  ELSE
    RETURN QUERY SELECT * FROM "${flyway:defaultSchema}".workflows w
                  WHERE w.parent_name = p_name AND w.parent_id = p_id AND w.parent_id IS NOT NULL
                  ORDER BY w.created_at;
  END IF;
END
$$;

CREATE FUNCTION "${flyway:defaultSchema}".wf_awakeables(p_name text, p_id text)
RETURNS SETOF "${flyway:defaultSchema}".workflow_awakeables
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
  RETURN QUERY SELECT * FROM "${flyway:defaultSchema}".workflow_awakeables a
                WHERE a.name = p_name AND a.id = p_id
                ORDER BY a.generation DESC, a.created_at;
END
$$;

-- Revives a failed instance with a fresh attempt budget; false if it is not failed (or missing).
CREATE FUNCTION "${flyway:defaultSchema}".wf_retry(p_name text, p_id text)
RETURNS boolean
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
  UPDATE "${flyway:defaultSchema}".workflows
     SET status = 'running', attempts = 0, last_error = NULL, failure = NULL, next_attempt_at = NULL,
         completed_at = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
   WHERE name = p_name AND id = p_id AND status = 'failed';
  RETURN FOUND;
END
$$;

-- The functions of versions 8 and 9 plan with disabled nodes too: the same guard (their plans are the
-- index walks their tests check, so this changes nothing until a plan falls back; about a
-- microsecond per call for one more setting).
ALTER FUNCTION "${flyway:defaultSchema}".wf_journal SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".append_events SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_start SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_create SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_append SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".read_events_global SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".read_events_stream SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".read_head SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".count_hidden_events SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_read_journal SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".read_stream_info SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".count_events_after SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_discover SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_count_runnable SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_count_pending_awakeables SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_wake SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_claim SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_renew SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_release SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_record_crash SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_find SET jit = off;
ALTER FUNCTION "${flyway:defaultSchema}".wf_find_awakeable SET jit = off;
