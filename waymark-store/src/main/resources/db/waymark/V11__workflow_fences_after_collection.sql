-- Waymark, version 11: three holes found by review, each with a test that failed before it.
--
-- 1. Lease epochs are never reused for a (name, id). Until now an instance started at epoch 1 (0
--    without an owner) and a claim added one, so after garbage collection deleted an instance and
--    the id was started again, a worker still running the old instance (its lease cleared by an
--    unfenced cancel) held an epoch the new instance would have too, passed its fence and journaled
--    the old run's step result into the new instance. Now every epoch is drawn from one sequence:
--    an epoch belongs to exactly one lease of one instance, and still increases for each instance.
-- 2. A child is kept while its parent could still read it: running, suspended, or failed (a retry
--    revives a failed parent, which resumes where it failed and may await the child). Garbage
--    collection used to delete the finished child of a failed parent, and a retried parent then
--    failed again: "child workflow ... is missing".
-- 3. Settling an awakeable takes the instance lock before it locks the awakeable's row, the order
--    every other writer uses (an instance's completion locks the instance, then abandons its
--    awakeables); the reverse order could deadlock a settlement against a completion.
-- 4. Recording a crash is fenced on the lease epoch like every other write of a run: a worker that
--    lost its lease no longer counts its crash against the instance another worker now runs (which
--    then reached maxAttempts early). The unfenced version stays for callers of older versions.

CREATE SEQUENCE "${flyway:defaultSchema}".workflow_lease_epochs AS bigint MINVALUE 1;
-- Above every epoch issued so far, so that no epoch drawn from now on equals an earlier one.
SELECT setval('"${flyway:defaultSchema}".workflow_lease_epochs',
              coalesce((SELECT max(lease_epoch) FROM "${flyway:defaultSchema}".workflows), 0) + 1, false);

-- As in version 5, except that an instance created with an owner gets a fresh epoch from the
-- sequence (returned as before in the fourth element) instead of 1.
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
BEGIN
  SELECT status, input INTO v_status, v_input
    FROM "${flyway:defaultSchema}".workflows WHERE name = p_name AND id = p_id;
  IF FOUND THEN
    RETURN ARRAY['exists', v_status, v_input::text, NULL];
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

-- As in version 9, except that the new epoch is drawn from the sequence instead of adding one (and is
-- still above the instance's last epoch should someone have written a larger one by hand).
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_claim(p_name text, p_id text, p_owner text, p_ttl_ms bigint)
RETURNS TABLE (epoch bigint, previous_expiry timestamptz, claimed_at timestamptz)
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
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
     SET lease_owner = p_owner,
         lease_epoch = greatest(w.lease_epoch + 1, nextval('"${flyway:defaultSchema}".workflow_lease_epochs')),
         lease_expires_at = now() + p_ttl_ms * interval '1 millisecond'
   WHERE w.name = p_name AND w.id = p_id
  RETURNING w.lease_epoch INTO epoch;
  previous_expiry := v_expires;
  claimed_at := now();
  RETURN NEXT;
END
$$;

-- As in version 10, with failed parents counted as live.
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
     ORDER BY w.completed_at
     LIMIT p_limit;
END
$$;

-- As in version 10, with failed parents counted as live. A parent can leave 'failed' only through a
-- retry (back to running), so a child whose parent is completed or cancelled stays collectable.
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
                   AND p.status IN ('running', 'suspended', 'failed') OFFSET 0) THEN
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

-- As in version 3, except that the instance lock is taken before the awakeable's row is locked (the
-- awakeable's owner read first, without a lock: an awakeable never changes owner).
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_settle_awakeable(
  p_awakeable uuid, p_status text, p_payload jsonb, p_failure text)
RETURNS text
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_name text;
  v_id text;
  v_status text;
BEGIN
  SELECT a.name, a.id, a.status INTO v_name, v_id, v_status
    FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.awakeable_id = p_awakeable;
  IF NOT FOUND THEN
    RETURN 'unknown';
  END IF;
  IF v_status <> 'pending' THEN
    RETURN 'already_' || v_status;
  END IF;
  PERFORM "${flyway:defaultSchema}".wf_lock(v_name, v_id);
  UPDATE "${flyway:defaultSchema}".workflow_awakeables
     SET status = p_status, payload = p_payload, failure = p_failure, completed_at = now()
   WHERE awakeable_id = p_awakeable AND status = 'pending';
  IF NOT FOUND THEN -- settled, or abandoned by the instance's end, while this waited for the lock
    SELECT a.status INTO v_status FROM "${flyway:defaultSchema}".workflow_awakeables a
     WHERE a.awakeable_id = p_awakeable;
    IF NOT FOUND THEN
      RETURN 'unknown';
    END IF;
    RETURN 'already_' || v_status;
  END IF;
  PERFORM "${flyway:defaultSchema}".wf_wake(v_name, v_id);
  RETURN 'settled';
END
$$;

-- As wf_record_crash of version 9, fenced: counts the crash only while the instance still has the
-- lease epoch of the attempt that crashed (returns NULL otherwise, as for a finished instance).
CREATE FUNCTION "${flyway:defaultSchema}".wf_record_crash(
  p_name text, p_id text, p_error text, p_base_ms bigint, p_cap_ms bigint, p_epoch bigint)
RETURNS integer
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
DECLARE
  v_status text;
  v_epoch bigint;
  v_attempts integer;
BEGIN
  SELECT w.status, w.lease_epoch INTO v_status, v_epoch FROM "${flyway:defaultSchema}".workflows w
   WHERE w.name = p_name AND w.id = p_id
     FOR UPDATE;
  IF v_status IN ('running', 'suspended') AND v_epoch = p_epoch THEN
    UPDATE "${flyway:defaultSchema}".workflows w
       SET attempts = w.attempts + 1, last_error = p_error, updated_at = now(),
           next_attempt_at = now() + LEAST(p_base_ms * power(2, w.attempts), p_cap_ms) * interval '1 millisecond'
     WHERE w.name = p_name AND w.id = p_id
    RETURNING w.attempts INTO v_attempts;
  END IF;
  RETURN v_attempts;
END
$$;
