-- Waymark, version 9: the store's reads, a workflow's journal read and a resume pass's discovery and
-- counts, as functions whose plans walk the index that serves each read, however large the tables
-- were when a plan was made and whatever their statistics say now.
-- Version 8 did this for the append and journal paths. The reads were plain statements prepared by
-- the driver: pgjdbc prepares a statement on the server at its fifth execution and the server plans
-- it generically from the sixth, keeping that plan until the next ANALYZE of a table it reads
-- (autovacuum runs that only after a table grew by a tenth, at most once a minute). Planned on small
-- tables, a page of one stream read every event (sequential scan and sort), a partitioned page and
-- the horizon's count read the whole event table. Planning each read afresh is no cure: with
-- statistics from before a bulk load, a category page chose a bitmap scan of the rest of the category
-- and a sort, 0.9 s per page of a million-event catch-up.
-- Here every read plans with sequential scans disabled and, when it is ordered, bitmap scans, sorts,
-- hash and merge joins too, so the only plan left is the ordered walk of one index from the cursor
-- that stops at the page's last row; each function keeps its generic plans. Each event's stream row
-- is a probe of its primary key (a lateral lookup that cannot be flattened): as a join, a partitioned
-- page scanned the whole stream table for the events it walked. A category read bounds the category
-- by a range rather than an equality and orders by it, so only the category index yields its order
-- (an equality would let a plan walk the global order and filter). Same rows, same order, same
-- visibility rule as before.

-- One statement per shape (all or category, forward or backward), each with its own cached plan:
-- one statement with the direction or the category as parameters would have one plan for all of them,
-- and dynamic SQL (EXECUTE) would plan every call.
CREATE FUNCTION "${flyway:defaultSchema}".read_events_global(
  p_forward boolean, p_tx xid8, p_position bigint, p_category text,
  p_partitions integer, p_member integer, p_limit integer)
RETURNS TABLE (global_position bigint, tx_id xid8, event_id uuid, stream_name text, stream_version bigint,
               event_type text, data jsonb, metadata jsonb, causation_id uuid, correlation_id uuid,
               created_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  IF p_category IS NULL AND p_forward THEN
    RETURN QUERY
      SELECT e.global_position, e.tx_id, e.event_id, s.stream_name, e.stream_version, e.event_type,
             e.data, e.metadata, e.causation_id, e.correlation_id, e.created_at
        FROM "${flyway:defaultSchema}".events e
       CROSS JOIN LATERAL (SELECT st.stream_name, st.stream_hash FROM "${flyway:defaultSchema}".streams st
                            WHERE st.stream_id = e.stream_id OFFSET 0) s
       WHERE (e.tx_id, e.global_position) > (p_tx, p_position)
         AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
         AND (p_partitions IS NULL OR ((s.stream_hash % p_partitions) + p_partitions) % p_partitions = p_member)
       ORDER BY e.tx_id, e.global_position
       LIMIT p_limit;
  ELSIF p_category IS NULL THEN
    RETURN QUERY
      SELECT e.global_position, e.tx_id, e.event_id, s.stream_name, e.stream_version, e.event_type,
             e.data, e.metadata, e.causation_id, e.correlation_id, e.created_at
        FROM "${flyway:defaultSchema}".events e
       CROSS JOIN LATERAL (SELECT st.stream_name, st.stream_hash FROM "${flyway:defaultSchema}".streams st
                            WHERE st.stream_id = e.stream_id OFFSET 0) s
       WHERE (e.tx_id, e.global_position) < (p_tx, p_position)
         AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
         AND (p_partitions IS NULL OR ((s.stream_hash % p_partitions) + p_partitions) % p_partitions = p_member)
       ORDER BY e.tx_id DESC, e.global_position DESC
       LIMIT p_limit;
  ELSIF p_forward THEN
    RETURN QUERY
      SELECT e.global_position, e.tx_id, e.event_id, s.stream_name, e.stream_version, e.event_type,
             e.data, e.metadata, e.causation_id, e.correlation_id, e.created_at
        FROM "${flyway:defaultSchema}".events e
       CROSS JOIN LATERAL (SELECT st.stream_name, st.stream_hash FROM "${flyway:defaultSchema}".streams st
                            WHERE st.stream_id = e.stream_id OFFSET 0) s
       WHERE e.category >= p_category AND e.category <= p_category
         AND (e.tx_id, e.global_position) > (p_tx, p_position)
         AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
         AND (p_partitions IS NULL OR ((s.stream_hash % p_partitions) + p_partitions) % p_partitions = p_member)
       ORDER BY e.category, e.tx_id, e.global_position
       LIMIT p_limit;
  ELSE
    RETURN QUERY
      SELECT e.global_position, e.tx_id, e.event_id, s.stream_name, e.stream_version, e.event_type,
             e.data, e.metadata, e.causation_id, e.correlation_id, e.created_at
        FROM "${flyway:defaultSchema}".events e
       CROSS JOIN LATERAL (SELECT st.stream_name, st.stream_hash FROM "${flyway:defaultSchema}".streams st
                            WHERE st.stream_id = e.stream_id OFFSET 0) s
       WHERE e.category >= p_category AND e.category <= p_category
         AND (e.tx_id, e.global_position) < (p_tx, p_position)
         AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
         AND (p_partitions IS NULL OR ((s.stream_hash % p_partitions) + p_partitions) % p_partitions = p_member)
       ORDER BY e.category DESC, e.tx_id DESC, e.global_position DESC
       LIMIT p_limit;
  END IF;
END
$$;

-- A page of one stream after (forward) or before (backward) a version; nothing for a deleted stream.
CREATE FUNCTION "${flyway:defaultSchema}".read_events_stream(
  p_stream text, p_forward boolean, p_version bigint, p_limit integer)
RETURNS TABLE (global_position bigint, tx_id xid8, event_id uuid, stream_name text, stream_version bigint,
               event_type text, data jsonb, metadata jsonb, causation_id uuid, correlation_id uuid,
               created_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  IF p_forward THEN
    RETURN QUERY
      SELECT e.global_position, e.tx_id, e.event_id, p_stream, e.stream_version, e.event_type,
             e.data, e.metadata, e.causation_id, e.correlation_id, e.created_at
        FROM "${flyway:defaultSchema}".events e
       WHERE e.stream_id = (SELECT s.stream_id FROM "${flyway:defaultSchema}".streams s
                             WHERE s.stream_name = p_stream AND s.deleted_at IS NULL)
         AND e.stream_version > p_version
       ORDER BY e.stream_version
       LIMIT p_limit;
  ELSE
    RETURN QUERY
      SELECT e.global_position, e.tx_id, e.event_id, p_stream, e.stream_version, e.event_type,
             e.data, e.metadata, e.causation_id, e.correlation_id, e.created_at
        FROM "${flyway:defaultSchema}".events e
       WHERE e.stream_id = (SELECT s.stream_id FROM "${flyway:defaultSchema}".streams s
                             WHERE s.stream_name = p_stream AND s.deleted_at IS NULL)
         AND e.stream_version < p_version
       ORDER BY e.stream_version DESC
       LIMIT p_limit;
  END IF;
END
$$;

-- The position of the last event below the visibility horizon, as {tx_id, global_position}, or
-- NULL when there is none.
CREATE FUNCTION "${flyway:defaultSchema}".read_head()
RETURNS text[]
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_tx xid8;
  v_position bigint;
BEGIN
  SELECT e.tx_id, e.global_position INTO v_tx, v_position
    FROM "${flyway:defaultSchema}".events e
   WHERE e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
   ORDER BY e.tx_id DESC, e.global_position DESC
   LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  RETURN ARRAY[v_tx::text, v_position::text];
END
$$;

-- The number of events at or above the visibility horizon: written by transactions that readers
-- must still wait for.
CREATE FUNCTION "${flyway:defaultSchema}".count_hidden_events()
RETURNS bigint
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN (SELECT count(*) FROM "${flyway:defaultSchema}".events e
           WHERE e.tx_id >= pg_snapshot_xmin(pg_current_snapshot()));
END
$$;

-- A workflow generation's journal, in order (the stream's soft deletion does not hide it). Every
-- resumed run reads its journal: planned on small tables, this read hashed every event of the table.
CREATE FUNCTION "${flyway:defaultSchema}".wf_read_journal(p_stream text)
RETURNS TABLE (stream_version bigint, event_id uuid, event_type text, step text, data jsonb,
               created_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT e.stream_version, e.event_id, e.event_type, e.data ->> 'step', e.data, e.created_at
      FROM "${flyway:defaultSchema}".events e
     WHERE e.stream_id = (SELECT s.stream_id FROM "${flyway:defaultSchema}".streams s WHERE s.stream_name = p_stream)
     ORDER BY e.stream_version;
END
$$;

-- One stream's row and head version (0 for a stream without events).
CREATE FUNCTION "${flyway:defaultSchema}".read_stream_info(p_stream text)
RETURNS TABLE (stream_name text, category text, version bigint, created_at timestamptz, deleted_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT s.stream_name, s.category,
           COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                      WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0),
           s.created_at, s.deleted_at
      FROM "${flyway:defaultSchema}".streams s
     WHERE s.stream_name = p_stream;
END
$$;

-- Visible events after a cursor (all streams or one category; whole or one partition member) and the
-- oldest one's append time: a subscription's lag, counted in proportion to the lag. The category
-- count walks the category index in order (an ordered subquery, which the planner keeps), so that a
-- plan cannot count the events of every category after the cursor instead.
CREATE FUNCTION "${flyway:defaultSchema}".count_events_after(
  p_tx xid8, p_position bigint, p_category text, p_partitions integer, p_member integer)
RETURNS TABLE (events bigint, oldest timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  IF p_category IS NULL THEN
    RETURN QUERY
      SELECT count(*), min(e.created_at)
        FROM "${flyway:defaultSchema}".events e
       CROSS JOIN LATERAL (SELECT st.stream_hash FROM "${flyway:defaultSchema}".streams st
                            WHERE st.stream_id = e.stream_id OFFSET 0) s
       WHERE (e.tx_id, e.global_position) > (p_tx, p_position)
         AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
         AND (p_partitions IS NULL OR ((s.stream_hash % p_partitions) + p_partitions) % p_partitions = p_member);
  ELSE
    RETURN QUERY
      SELECT count(*), min(x.created_at)
        FROM (SELECT e.created_at
                FROM "${flyway:defaultSchema}".events e
               CROSS JOIN LATERAL (SELECT st.stream_hash FROM "${flyway:defaultSchema}".streams st
                                    WHERE st.stream_id = e.stream_id OFFSET 0) s
               WHERE e.category >= p_category AND e.category <= p_category
                 AND (e.tx_id, e.global_position) > (p_tx, p_position)
                 AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
                 AND (p_partitions IS NULL OR ((s.stream_hash % p_partitions) + p_partitions) % p_partitions = p_member)
               ORDER BY e.category, e.tx_id, e.global_position) x;
  END IF;
END
$$;

-- Runnable instances (running, or suspended with a due wake time; not paced by a crash) of the given
-- names, or of every other name when p_unknown, oldest first. The walk covers the active instances
-- only (the partial index of running and suspended rows), however many finished rows the table holds.
CREATE FUNCTION "${flyway:defaultSchema}".wf_discover(p_names text[], p_unknown boolean, p_limit integer)
RETURNS TABLE (name text, id text)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT w.name, w.id FROM "${flyway:defaultSchema}".workflows w
     WHERE w.status IN ('running', 'suspended')
       AND (w.status = 'running' OR w.wake_after <= now())
       AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= now())
       AND (w.name = ANY (p_names)) <> p_unknown
     ORDER BY w.updated_at, w.name, w.id
     LIMIT p_limit;
END
$$;

-- Instances a resume pass would pick up now, and pending awakeables across all workflows (every
-- resume pass counts the latter, metrics the former): counted from the partial indexes of active
-- instances and of pending awakeables, however many finished rows the tables hold.
CREATE FUNCTION "${flyway:defaultSchema}".wf_count_runnable()
RETURNS bigint
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN (SELECT count(*) FROM "${flyway:defaultSchema}".workflows w
           WHERE w.status IN ('running', 'suspended')
             AND (w.status = 'running' OR w.wake_after <= now())
             AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= now()));
END
$$;

CREATE FUNCTION "${flyway:defaultSchema}".wf_count_pending_awakeables()
RETURNS bigint
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN (SELECT count(*) FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.status = 'pending');
END
$$;

-- Waking an instance finds its row by primary key, then decides on its status (same outcome as
-- version 3). As one statement with the status in its condition, a plan made on small tables walked
-- the partial index of active instances instead: with 20,000 instances waiting on awakeables,
-- settling one (which wakes its instance) read all 20,000.
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_wake(p_name text, p_id text)
RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off
AS $$
DECLARE
  v_status text;
BEGIN
  PERFORM "${flyway:defaultSchema}".wf_lock(p_name, p_id);
  SELECT w.status INTO v_status FROM "${flyway:defaultSchema}".workflows w
   WHERE w.name = p_name AND w.id = p_id;
  IF v_status = 'suspended' THEN
    -- Still suspended when updated (a writer without the instance lock may have moved it on): compared
    -- with a variable, which no partial index's predicate covers, so the row is found by primary key.
    UPDATE "${flyway:defaultSchema}".workflows w
       SET status = 'running', wake_after = NULL, waiting_on = NULL, updated_at = now()
     WHERE w.name = p_name AND w.id = p_id AND w.status = v_status;
  END IF;
END
$$;

-- A run's lease statements (previously statements prepared by the driver; same outcomes): each finds
-- the run's row by primary key. Planned on a small table, each read every running instance once the
-- table had grown (a sequential scan, or the partial index of active instances for a condition on
-- the status): claiming read 40,026 rows with 20,000 instances running elsewhere.

-- Claims the lease when the instance is runnable (running, or suspended with a due wake time; not
-- paced by a crash) and unleased or its lease expired. Returns the new epoch, the previous expiry
-- and the claim time, or no row.
CREATE FUNCTION "${flyway:defaultSchema}".wf_claim(p_name text, p_id text, p_owner text, p_ttl_ms bigint)
RETURNS TABLE (epoch bigint, previous_expiry timestamptz, claimed_at timestamptz)
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_status text;
  v_wake_after timestamptz;
  v_owner text;
  v_expires timestamptz;
  v_next_attempt timestamptz;
BEGIN
  SELECT w.status, w.wake_after, w.lease_owner, w.lease_expires_at, w.next_attempt_at
    INTO v_status, v_wake_after, v_owner, v_expires, v_next_attempt
    FROM "${flyway:defaultSchema}".workflows w
   WHERE w.name = p_name AND w.id = p_id
     FOR UPDATE;
  IF NOT FOUND
     OR ((v_status = 'running' OR (v_status = 'suspended' AND v_wake_after <= now()))
         AND (v_owner IS NULL OR v_expires < now())
         AND (v_next_attempt IS NULL OR v_next_attempt <= now())) IS NOT TRUE THEN
    RETURN;
  END IF;
  UPDATE "${flyway:defaultSchema}".workflows w
     SET lease_owner = p_owner, lease_epoch = w.lease_epoch + 1,
         lease_expires_at = now() + p_ttl_ms * interval '1 millisecond'
   WHERE w.name = p_name AND w.id = p_id
  RETURNING w.lease_epoch INTO epoch;
  previous_expiry := v_expires;
  claimed_at := now();
  RETURN NEXT;
END
$$;

-- Extends the leases p_owner holds on the given instances; returns how many were extended.
CREATE FUNCTION "${flyway:defaultSchema}".wf_renew(p_owner text, p_names text[], p_ids text[], p_ttl_ms bigint)
RETURNS integer
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_n integer;
BEGIN
  UPDATE "${flyway:defaultSchema}".workflows w
     SET lease_expires_at = now() + p_ttl_ms * interval '1 millisecond'
    FROM unnest(p_names, p_ids) AS k(name, id)
   WHERE w.name = k.name AND w.id = k.id AND w.lease_owner = p_owner;
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n;
END
$$;

-- Releases a lease held at p_epoch; a run that made progress also clears its crash record. Returns
-- the instance's status after the release, or NULL if the lease was no longer held.
CREATE FUNCTION "${flyway:defaultSchema}".wf_release(
  p_name text, p_id text, p_owner text, p_epoch bigint, p_progressed boolean)
RETURNS text
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_status text;
BEGIN
  UPDATE "${flyway:defaultSchema}".workflows w
     SET lease_owner = NULL, lease_expires_at = NULL,
         attempts = CASE WHEN p_progressed THEN 0 ELSE w.attempts END,
         last_error = CASE WHEN p_progressed THEN NULL ELSE w.last_error END,
         next_attempt_at = CASE WHEN p_progressed THEN NULL ELSE w.next_attempt_at END
   WHERE w.name = p_name AND w.id = p_id AND w.lease_owner = p_owner AND w.lease_epoch = p_epoch
  RETURNING w.status INTO v_status;
  RETURN v_status;
END
$$;

-- Records a crash of a running or suspended instance: one more attempt, the error, and the next
-- attempt time (backoff p_base_ms * 2^attempts, capped at p_cap_ms). Returns the attempts, or NULL
-- when the instance is missing or terminal.
CREATE FUNCTION "${flyway:defaultSchema}".wf_record_crash(
  p_name text, p_id text, p_error text, p_base_ms bigint, p_cap_ms bigint)
RETURNS integer
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_status text;
  v_attempts integer;
BEGIN
  SELECT w.status INTO v_status FROM "${flyway:defaultSchema}".workflows w
   WHERE w.name = p_name AND w.id = p_id
     FOR UPDATE;
  IF v_status IN ('running', 'suspended') THEN
    UPDATE "${flyway:defaultSchema}".workflows w
       SET attempts = w.attempts + 1, last_error = p_error, updated_at = now(),
           next_attempt_at = now() + LEAST(p_base_ms * power(2, w.attempts), p_cap_ms) * interval '1 millisecond'
     WHERE w.name = p_name AND w.id = p_id
    RETURNING w.attempts INTO v_attempts;
  END IF;
  RETURN v_attempts;
END
$$;

-- An instance's row (every run reads it at its start; handles and inspection too) and an awakeable's
-- row (every await of one), by primary key whatever the plan's age.
CREATE FUNCTION "${flyway:defaultSchema}".wf_find(p_name text, p_id text)
RETURNS SETOF "${flyway:defaultSchema}".workflows
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN QUERY SELECT * FROM "${flyway:defaultSchema}".workflows w WHERE w.name = p_name AND w.id = p_id;
END
$$;

CREATE FUNCTION "${flyway:defaultSchema}".wf_find_awakeable(p_awakeable uuid)
RETURNS SETOF "${flyway:defaultSchema}".workflow_awakeables
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN QUERY SELECT * FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.awakeable_id = p_awakeable;
END
$$;
