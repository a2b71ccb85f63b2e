-- Waymark workflows, version 3: instances (the wake ledger and lease rows) and awakeables.
-- A workflow's journal lives in the event store: one stream per generation,
-- '$wf-<name>-<id>' for generation 0 and '$wf-<name>-<id>#<g>' after continue-as-new.
-- Every journal write goes through the functions below, which serialize the writes of one
-- instance on a transaction-scoped advisory lock, fence them on the lease epoch, and keep the
-- instance row in step with the journal in the same transaction.

CREATE TABLE "${flyway:defaultSchema}".workflows (
  name             text NOT NULL,
  id               text NOT NULL,
  generation       integer NOT NULL DEFAULT 0,
  status           text NOT NULL,
  input            jsonb NOT NULL,
  result           jsonb,
  failure          text,
  waiting_on       text,
  wake_after       timestamptz,
  attempts         integer NOT NULL DEFAULT 0,
  last_error       text,
  next_attempt_at  timestamptz,
  lease_owner      text,
  lease_epoch      bigint NOT NULL DEFAULT 0,
  lease_expires_at timestamptz,
  parent_name      text,
  parent_id        text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  completed_at     timestamptz,
  CONSTRAINT workflows_pkey PRIMARY KEY (name, id),
  CONSTRAINT workflows_status_check
    CHECK (status IN ('running', 'suspended', 'completed', 'cancelled', 'failed'))
);

-- Discovery: running rows, and suspended rows whose wake time has come. Both arms positive.
CREATE INDEX workflows_active_idx ON "${flyway:defaultSchema}".workflows (status, wake_after)
  WHERE status IN ('running', 'suspended');
CREATE INDEX workflows_parent_idx ON "${flyway:defaultSchema}".workflows (parent_name, parent_id)
  WHERE parent_id IS NOT NULL;
CREATE INDEX workflows_lease_idx ON "${flyway:defaultSchema}".workflows (lease_owner)
  WHERE lease_owner IS NOT NULL;

CREATE TABLE "${flyway:defaultSchema}".workflow_awakeables (
  awakeable_id uuid NOT NULL,
  name         text NOT NULL,
  id           text NOT NULL,
  generation   integer NOT NULL,
  label        text NOT NULL,
  status       text NOT NULL DEFAULT 'pending',
  payload      jsonb,
  failure      text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  CONSTRAINT workflow_awakeables_pkey PRIMARY KEY (awakeable_id),
  CONSTRAINT workflow_awakeables_status_check
    CHECK (status IN ('pending', 'completed', 'failed', 'cancelled', 'abandoned'))
);
CREATE INDEX workflow_awakeables_owner_idx ON "${flyway:defaultSchema}".workflow_awakeables (name, id);
CREATE INDEX workflow_awakeables_pending_idx ON "${flyway:defaultSchema}".workflow_awakeables (created_at)
  WHERE status = 'pending';

CREATE FUNCTION "${flyway:defaultSchema}".wf_stream(p_name text, p_id text, p_gen integer)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT '$wf-' || p_name || '-' || p_id || CASE WHEN p_gen > 0 THEN '#' || p_gen ELSE '' END
$$;

CREATE FUNCTION "${flyway:defaultSchema}".wf_lock(p_name text, p_id text)
RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || p_name || '#' || p_id, 0))
$$;

-- Durable, idempotent start. Returns {outcome, status, input, epoch}: outcome 'created' or
-- 'exists' (then status and input are the existing instance's). With p_owner the new instance is
-- leased to that owner at epoch 1, so the starting process can run it at once.
CREATE FUNCTION "${flyway:defaultSchema}".wf_start(
  p_name text, p_id text, p_input jsonb, p_event_id uuid,
  p_parent_name text, p_parent_id text, p_owner text, p_ttl_ms bigint)
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_status text;
  v_input jsonb;
BEGIN
  PERFORM "${flyway:defaultSchema}".wf_lock(p_name, p_id);
  SELECT status, input INTO v_status, v_input
    FROM "${flyway:defaultSchema}".workflows WHERE name = p_name AND id = p_id;
  IF FOUND THEN
    RETURN ARRAY['exists', v_status, v_input::text, NULL];
  END IF;
  PERFORM "${flyway:defaultSchema}".append_events(
    ARRAY["${flyway:defaultSchema}".wf_stream(p_name, p_id, 0)], ARRAY[-1::bigint], ARRAY[1],
    ARRAY[p_event_id], ARRAY['WorkflowStarted'],
    ARRAY[jsonb_build_object('input', p_input, 'generation', 0)], ARRAY[NULL::jsonb],
    ARRAY[NULL::uuid], ARRAY[NULL::uuid], now());
  INSERT INTO "${flyway:defaultSchema}".workflows
    (name, id, status, input, parent_name, parent_id, lease_owner, lease_epoch, lease_expires_at)
  VALUES (p_name, p_id, 'running', p_input, p_parent_name, p_parent_id, p_owner,
          CASE WHEN p_owner IS NULL THEN 0 ELSE 1 END,
          CASE WHEN p_owner IS NULL THEN NULL ELSE now() + p_ttl_ms * interval '1 millisecond' END);
  RETURN ARRAY['created', 'running', NULL, CASE WHEN p_owner IS NULL THEN '0' ELSE '1' END];
END
$$;

-- Wakes a suspended instance: the caller holds nothing of it; takes its lock so that a concurrent
-- suspend either sees the resolved wake source or is flipped back to running here.
CREATE FUNCTION "${flyway:defaultSchema}".wf_wake(p_name text, p_id text)
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "${flyway:defaultSchema}".wf_lock(p_name, p_id);
  UPDATE "${flyway:defaultSchema}".workflows
     SET status = 'running', wake_after = NULL, waiting_on = NULL, updated_at = now()
   WHERE name = p_name AND id = p_id AND status = 'suspended';
END
$$;

-- One journal entry. p_terminal is NULL for a step, else the terminal status the entry records
-- ('completed', 'cancelled', 'failed'). Returns {outcome, detail}:
--   appended              the entry was written;
--   present, <result>     an entry with this id exists (first writer wins): its step result;
--   refused, <status>     the instance is terminal;
--   lease_lost, <epoch>   p_epoch is not the instance's lease epoch;
--   stale, <generation>   p_gen is not the current generation;
--   missing               no such instance.
CREATE FUNCTION "${flyway:defaultSchema}".wf_append(
  p_name text, p_id text, p_gen integer, p_event_id uuid, p_type text, p_data jsonb,
  p_epoch bigint, p_terminal text, p_result jsonb, p_failure text)
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_status text;
  v_epoch bigint;
  v_gen integer;
  v_parent_name text;
  v_parent_id text;
  v_present jsonb;
  v_stream bigint;
  v_version bigint;
BEGIN
  -- The instance lock serializes every write of the instance and of its journal streams (only
  -- these functions write '$wf-' streams), and it is taken before the first write: the journal
  -- append below therefore keeps the store's rule that per-stream order agrees with the global
  -- order without a stream lock of its own.
  PERFORM pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || p_name || '#' || p_id, 0));
  SELECT status, lease_epoch, generation, parent_name, parent_id
    INTO v_status, v_epoch, v_gen, v_parent_name, v_parent_id
    FROM "${flyway:defaultSchema}".workflows WHERE name = p_name AND id = p_id;
  IF NOT FOUND THEN
    RETURN ARRAY['missing', NULL];
  END IF;
  IF p_epoch IS NOT NULL AND p_epoch <> v_epoch THEN
    RETURN ARRAY['lease_lost', v_epoch::text];
  END IF;
  SELECT e.data INTO v_present FROM "${flyway:defaultSchema}".events e WHERE e.event_id = p_event_id;
  IF FOUND THEN
    RETURN ARRAY['present', (v_present -> 'result')::text];
  END IF;
  IF v_status IN ('completed', 'cancelled', 'failed') THEN
    RETURN ARRAY['refused', v_status];
  END IF;
  IF p_gen <> v_gen THEN
    RETURN ARRAY['stale', v_gen::text];
  END IF;
  SELECT s.stream_id,
         COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                    WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0)
    INTO v_stream, v_version
    FROM "${flyway:defaultSchema}".streams s
   WHERE s.stream_name = "${flyway:defaultSchema}".wf_stream(p_name, p_id, p_gen);
  IF FOUND THEN
    INSERT INTO "${flyway:defaultSchema}".events
      (event_id, stream_id, stream_version, category, event_type, data, created_at)
    VALUES (p_event_id, v_stream, v_version + 1, '$wf', p_type, p_data, now());
  ELSE
    PERFORM "${flyway:defaultSchema}".append_events(
      ARRAY["${flyway:defaultSchema}".wf_stream(p_name, p_id, p_gen)], ARRAY[-1::bigint], ARRAY[1],
      ARRAY[p_event_id], ARRAY[p_type], ARRAY[p_data], ARRAY[NULL::jsonb],
      ARRAY[NULL::uuid], ARRAY[NULL::uuid], now());
  END IF;
  IF p_terminal IS NOT NULL THEN
    -- a terminal instance holds no lease: the writer's release is folded into this statement
    UPDATE "${flyway:defaultSchema}".workflows
       SET status = p_terminal, result = p_result, failure = p_failure, waiting_on = NULL,
           wake_after = NULL, next_attempt_at = NULL, updated_at = now(), completed_at = now(),
           lease_owner = NULL, lease_expires_at = NULL,
           attempts = CASE WHEN p_terminal = 'completed' THEN 0 ELSE attempts END,
           last_error = CASE WHEN p_terminal = 'completed' THEN NULL ELSE last_error END
     WHERE name = p_name AND id = p_id;
    UPDATE "${flyway:defaultSchema}".workflow_awakeables
       SET status = 'abandoned', completed_at = now()
     WHERE name = p_name AND id = p_id AND status = 'pending';
    IF v_parent_id IS NOT NULL THEN
      PERFORM "${flyway:defaultSchema}".wf_wake(v_parent_name, v_parent_id);
    END IF;
  ELSIF v_status = 'suspended' THEN
    UPDATE "${flyway:defaultSchema}".workflows
       SET status = 'running', wake_after = NULL, waiting_on = NULL, updated_at = now()
     WHERE name = p_name AND id = p_id;
  END IF;
  RETURN ARRAY['appended', NULL];
END
$$;

-- Parks a run on one wake source, unless it already resolved. Returns 'suspended', 'resolved',
-- 'lease_lost', 'stale', or the instance's status when it is no longer running.
CREATE FUNCTION "${flyway:defaultSchema}".wf_suspend(
  p_name text, p_id text, p_gen integer, p_epoch bigint, p_waiting text,
  p_wake_after timestamptz, p_awakeable uuid, p_child_name text, p_child_id text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_status text;
  v_epoch bigint;
  v_gen integer;
BEGIN
  PERFORM "${flyway:defaultSchema}".wf_lock(p_name, p_id);
  SELECT status, lease_epoch, generation INTO v_status, v_epoch, v_gen
    FROM "${flyway:defaultSchema}".workflows WHERE name = p_name AND id = p_id;
  IF NOT FOUND THEN
    RETURN 'missing';
  END IF;
  IF p_epoch IS NOT NULL AND p_epoch <> v_epoch THEN
    RETURN 'lease_lost';
  END IF;
  IF v_status NOT IN ('running', 'suspended') THEN
    RETURN v_status;
  END IF;
  IF p_gen <> v_gen THEN
    RETURN 'stale';
  END IF;
  IF p_awakeable IS NOT NULL AND EXISTS (
       SELECT 1 FROM "${flyway:defaultSchema}".workflow_awakeables
        WHERE awakeable_id = p_awakeable AND status <> 'pending') THEN
    RETURN 'resolved';
  END IF;
  IF p_child_id IS NOT NULL AND EXISTS (
       SELECT 1 FROM "${flyway:defaultSchema}".workflows
        WHERE name = p_child_name AND id = p_child_id
          AND status IN ('completed', 'cancelled', 'failed')) THEN
    RETURN 'resolved';
  END IF;
  IF p_wake_after IS NOT NULL AND p_wake_after <= now() THEN
    RETURN 'resolved';
  END IF;
  UPDATE "${flyway:defaultSchema}".workflows
     SET status = 'suspended', waiting_on = p_waiting, wake_after = p_wake_after, updated_at = now()
   WHERE name = p_name AND id = p_id;
  RETURN 'suspended';
END
$$;

-- Closes generation p_gen and opens p_gen + 1 with p_seed as its input, in one transaction.
-- Returns 'rotated', 'lease_lost', 'stale', 'missing' or the terminal status that refused it.
CREATE FUNCTION "${flyway:defaultSchema}".wf_rotate(
  p_name text, p_id text, p_gen integer, p_epoch bigint, p_seed jsonb,
  p_marker_id uuid, p_start_id uuid)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_status text;
  v_epoch bigint;
  v_gen integer;
BEGIN
  PERFORM "${flyway:defaultSchema}".wf_lock(p_name, p_id);
  SELECT status, lease_epoch, generation INTO v_status, v_epoch, v_gen
    FROM "${flyway:defaultSchema}".workflows WHERE name = p_name AND id = p_id;
  IF NOT FOUND THEN
    RETURN 'missing';
  END IF;
  IF p_epoch IS NOT NULL AND p_epoch <> v_epoch THEN
    RETURN 'lease_lost';
  END IF;
  IF v_status IN ('completed', 'cancelled', 'failed') THEN
    RETURN v_status;
  END IF;
  IF p_gen <> v_gen THEN
    RETURN 'stale';
  END IF;
  PERFORM "${flyway:defaultSchema}".append_events(
    ARRAY["${flyway:defaultSchema}".wf_stream(p_name, p_id, p_gen),
          "${flyway:defaultSchema}".wf_stream(p_name, p_id, p_gen + 1)],
    ARRAY[-1::bigint, -1::bigint], ARRAY[1, 1],
    ARRAY[p_marker_id, p_start_id], ARRAY['WorkflowContinuedAsNew', 'WorkflowStarted'],
    ARRAY[jsonb_build_object('generation', p_gen + 1),
          jsonb_build_object('input', p_seed, 'generation', p_gen + 1)],
    ARRAY[NULL::jsonb, NULL::jsonb], ARRAY[NULL::uuid, NULL::uuid], ARRAY[NULL::uuid, NULL::uuid], now());
  UPDATE "${flyway:defaultSchema}".workflows
     SET generation = p_gen + 1, status = 'running', waiting_on = NULL, wake_after = NULL,
         attempts = 0, last_error = NULL, next_attempt_at = NULL, updated_at = now()
   WHERE name = p_name AND id = p_id;
  UPDATE "${flyway:defaultSchema}".workflow_awakeables
     SET status = 'abandoned', completed_at = now()
   WHERE name = p_name AND id = p_id AND generation = p_gen AND status = 'pending';
  RETURN 'rotated';
END
$$;

-- Completes, fails or cancels an awakeable; the first settlement wins. Returns 'settled',
-- 'unknown', or 'already_<status>' with the status that won earlier.
CREATE FUNCTION "${flyway:defaultSchema}".wf_settle_awakeable(
  p_awakeable uuid, p_status text, p_payload jsonb, p_failure text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_name text;
  v_id text;
  v_status text;
BEGIN
  UPDATE "${flyway:defaultSchema}".workflow_awakeables
     SET status = p_status, payload = p_payload, failure = p_failure, completed_at = now()
   WHERE awakeable_id = p_awakeable AND status = 'pending'
  RETURNING name, id INTO v_name, v_id;
  IF NOT FOUND THEN
    SELECT status INTO v_status FROM "${flyway:defaultSchema}".workflow_awakeables
     WHERE awakeable_id = p_awakeable;
    IF NOT FOUND THEN
      RETURN 'unknown';
    END IF;
    RETURN 'already_' || v_status;
  END IF;
  PERFORM "${flyway:defaultSchema}".wf_wake(v_name, v_id);
  RETURN 'settled';
END
$$;
