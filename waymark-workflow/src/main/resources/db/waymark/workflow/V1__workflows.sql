-- Waymark workflows schema (baseline of waymark-workflow): instances (the wake ledger and lease
-- rows), awakeables, and the functions every journal write goes through.
-- Applied after waymark-store's baseline, whose tables and functions it uses.
--
-- A workflow's journal lives in the event store: one stream per generation,
-- '$wf-<name>-<id>' for generation 0 and '$wf-<name>-<id>#<g>' after continue-as-new.
-- Every journal write goes through the functions below, which serialize the writes of one
-- instance on a transaction-scoped advisory lock, fence them on the lease epoch, and keep the
-- instance row in step with the journal in the same transaction. Every writer of an instance and
-- its awakeables takes the instance lock first, then the rows, so no two of them deadlock; a
-- child's writes take the child's lock, then the parent's.
--
-- How the functions are written: PL/pgSQL pays executor start-up and shutdown for every SQL
-- statement it runs (PERFORM included) but evaluates a plain expression such as an IF condition
-- directly, so the hot paths take locks in IF conditions and do a step's stream lookup, head read,
-- first-writer check and insert in one INSERT ... SELECT. The functions that read the tables keep
-- their plans on the indexes that serve them whatever the tables' size when planned
-- (enable_seqscan = off and, where it matters, no bitmap scans, sorts, hash or merge joins; generic
-- plans), and plan with JIT compilation off: should a statement ever fall back to a disabled plan node, its cost (10^10 and
-- more) would pass jit_above_cost and PostgreSQL would compile it on every execution (measured: a
-- collection pass whose candidates fell back to a sequential scan took 742 ms instead of about 1 ms).
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
  created_at       timestamptz NOT NULL DEFAULT "${flyway:defaultSchema}".waymark_now(),
  updated_at       timestamptz NOT NULL DEFAULT "${flyway:defaultSchema}".waymark_now(),
  completed_at     timestamptz,
  CONSTRAINT workflows_pkey PRIMARY KEY (name, id),
  CONSTRAINT workflows_status_check
    CHECK (status IN ('running', 'suspended', 'completed', 'cancelled', 'failed'))
);

CREATE TABLE "${flyway:defaultSchema}".workflow_awakeables (
  awakeable_id uuid NOT NULL,
  name         text NOT NULL,
  id           text NOT NULL,
  generation   integer NOT NULL,
  label        text NOT NULL,
  status       text NOT NULL DEFAULT 'pending',
  payload      jsonb,
  failure      text,
  created_at   timestamptz NOT NULL DEFAULT "${flyway:defaultSchema}".waymark_now(),
  completed_at timestamptz,
  CONSTRAINT workflow_awakeables_pkey PRIMARY KEY (awakeable_id),
  CONSTRAINT workflow_awakeables_status_check
    CHECK (status IN ('pending', 'completed', 'failed', 'cancelled', 'abandoned'))
);

-- Lease epochs: every epoch is drawn from this one sequence, so it belongs to exactly one lease of
-- one instance and still increases for each instance. Epochs counted per instance would repeat once
-- garbage collection deleted an instance and its id was started again, and a worker still running
-- the old instance could pass the new one's fence.
CREATE SEQUENCE "${flyway:defaultSchema}".workflow_lease_epochs AS bigint MINVALUE 1;

-- Discovery: running rows, and suspended rows whose wake time has come. Both arms positive.
CREATE INDEX workflows_active_idx ON "${flyway:defaultSchema}".workflows (status, wake_after)
  WHERE status IN ('running', 'suspended');

CREATE INDEX workflows_parent_idx ON "${flyway:defaultSchema}".workflows (parent_name, parent_id)
  WHERE parent_id IS NOT NULL;

CREATE INDEX workflows_lease_idx ON "${flyway:defaultSchema}".workflows (lease_owner)
  WHERE lease_owner IS NOT NULL;

CREATE INDEX workflow_awakeables_owner_idx ON "${flyway:defaultSchema}".workflow_awakeables (name, id);

CREATE INDEX workflow_awakeables_pending_idx ON "${flyway:defaultSchema}".workflow_awakeables (created_at)
  WHERE status = 'pending';

-- Garbage collection of finished workflows.
-- A finished instance (completed, cancelled or failed) keeps its row, its awakeables and the journal
-- streams of every generation until it is collected. Collection deletes all of them, one instance per
-- transaction, once the instance finished at least a retention period ago by the database clock,
-- unless a parent could still read it or it is a cancelled parent of live children (see
-- wf_gc_candidates). A collected parent's unfinished children are detached: they run to their end,
-- and their end wakes nobody (wf_collect clears their parent columns). Journal events are deleted
-- from the event store: a subscription that had not read them by then never will. The id can be
-- started again afterwards, as a new instance.

-- Finished instances in the order they finished: the collector's walk.
CREATE INDEX workflows_finished_idx ON "${flyway:defaultSchema}".workflows (completed_at)
  WHERE status IN ('completed', 'cancelled', 'failed');

-- Due work in due order, for the resume workers' claims (wf_claim_due) and the backlog
-- (wf_backlog): a running instance is due since its last change, a suspended one at its wake time
-- (awakeables and children without a deadline have none and are not in the index: their settlement
-- makes the instance running).
CREATE INDEX workflows_due_idx ON "${flyway:defaultSchema}".workflows
  ((CASE WHEN status = 'running' THEN updated_at ELSE wake_after END))
  WHERE status = 'running' OR (status = 'suspended' AND wake_after IS NOT NULL);

-- The journal stream of a generation: '$wf-<name>-<id>', with '#<g>' after continue-as-new.
-- Inlinable: the generation is cast to text explicitly, so every operator in the body is immutable
-- and the planner folds it into the calling query (a STABLE operator there made each call parse
-- and plan the body again: about a tenth of the server's time per journal write).
CREATE FUNCTION "${flyway:defaultSchema}".wf_stream(p_name text, p_id text, p_gen integer)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '$wf-' || p_name || '-' || p_id || CASE WHEN p_gen > 0 THEN '#' || p_gen::text ELSE '' END
$$;

-- The instance lock: serializes every write of one instance's journal streams (only these functions
-- write '$wf-' streams). In PL/pgSQL because a SQL-language function that cannot be inlined is
-- parsed and planned on every call, while PL/pgSQL keeps its plan for the session. The hot paths
-- take the same key inline, in an IF condition.
CREATE FUNCTION "${flyway:defaultSchema}".wf_lock(p_name text, p_id text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || p_name || '#' || p_id, 0));
END
$$;

-- Durable, idempotent start. Returns {outcome, status, input, epoch}: outcome 'created' or
-- 'exists' (then status and input are the existing instance's), or 'parent_ended' (see wf_create).
-- With p_owner the new instance is leased to that owner at a fresh epoch, so the starting process
-- can run it at once. Same checks as append_events (no earlier write in the transaction, READ
-- COMMITTED), then the instance lock, taken before the first write.
CREATE FUNCTION "${flyway:defaultSchema}".wf_start(
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

-- Wakes a suspended instance: the caller holds nothing of it; takes its lock so that a concurrent
-- suspend either sees the resolved wake source or is flipped back to running here. Finds the row by
-- primary key, then decides on its status: as one statement with the status in its condition, a
-- plan made on small tables walked the partial index of active instances instead (with 20,000
-- instances waiting on awakeables, settling one read all 20,000).
CREATE FUNCTION "${flyway:defaultSchema}".wf_wake(p_name text, p_id text)
RETURNS void
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
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
       SET status = 'running', wake_after = NULL, waiting_on = NULL, updated_at = "${flyway:defaultSchema}".waymark_now()
     WHERE w.name = p_name AND w.id = p_id AND w.status = v_status;
  END IF;
END
$$;

-- One journal entry. p_terminal is NULL for a step, else the terminal status the entry records
-- ('completed', 'cancelled', 'failed'). Returns {outcome, detail}, checked in this order:
--   lease_lost, <epoch>   p_epoch is not the instance's lease epoch;
--   present, <result>     an entry with this id exists (first writer wins): its step result;
--   refused, <status>     the instance is terminal;
--   stale, <generation>   p_gen is not the current generation;
--   missing               no such instance;
--   appended              the entry was written.
CREATE FUNCTION "${flyway:defaultSchema}".wf_append(
  p_name text, p_id text, p_gen integer, p_event_id uuid, p_type text, p_data jsonb,
  p_epoch bigint, p_terminal text, p_result jsonb, p_failure text)
RETURNS text[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_status text;
  v_epoch bigint;
  v_gen integer;
  v_parent_name text;
  v_parent_id text;
  v_present jsonb;
BEGIN
  -- The instance lock (wf_lock's key), before the first write.
  IF pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || p_name || '#' || p_id, 0)) IS NULL THEN
    NULL; -- the condition only takes the lock
  END IF;
  IF p_terminal IS NULL AND p_epoch IS NOT NULL THEN
    -- The usual case, a fenced step of a running instance, in one statement: it inserts only when
    -- every check below would pass (instance found, epoch equal, no entry with this id, status
    -- running, so nothing to flip, generation current, stream present), with the same version.
    -- Nothing else writes this instance's entries while its lock is held, so the check for an
    -- entry with this id cannot race the insert. Otherwise nothing was written: check one by one.
    INSERT INTO "${flyway:defaultSchema}".events
      (event_id, stream_id, stream_version, category, event_type, data, created_at)
    SELECT p_event_id, s.stream_id,
           COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                      WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0) + 1,
           '$wf', p_type, p_data, "${flyway:defaultSchema}".waymark_now()
      FROM "${flyway:defaultSchema}".workflows w
      JOIN "${flyway:defaultSchema}".streams s
        ON s.stream_name = "${flyway:defaultSchema}".wf_stream(p_name, p_id, p_gen)
     WHERE w.name = p_name AND w.id = p_id AND w.lease_epoch = p_epoch AND w.status = 'running'
       AND w.generation = p_gen
       AND NOT EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".events e WHERE e.event_id = p_event_id);
    IF FOUND THEN
      RETURN ARRAY['appended', NULL];
    END IF;
  END IF;
  SELECT status, lease_epoch, generation, parent_name, parent_id
    INTO v_status, v_epoch, v_gen, v_parent_name, v_parent_id
    FROM "${flyway:defaultSchema}".workflows WHERE name = p_name AND id = p_id;
  IF NOT FOUND THEN
    RETURN ARRAY['missing', NULL];
  END IF;
  IF p_epoch IS NOT NULL AND p_epoch <> v_epoch THEN
    RETURN ARRAY['lease_lost', v_epoch::text];
  END IF;
  IF v_status IN ('completed', 'cancelled', 'failed') OR p_gen <> v_gen THEN
    SELECT e.data INTO v_present FROM "${flyway:defaultSchema}".events e WHERE e.event_id = p_event_id;
    IF FOUND THEN
      RETURN ARRAY['present', (v_present -> 'result')::text];
    ELSIF v_status IN ('completed', 'cancelled', 'failed') THEN
      RETURN ARRAY['refused', v_status];
    END IF;
    RETURN ARRAY['stale', v_gen::text];
  END IF;
  -- Stream lookup, head read, first-writer check and insert in one statement (see above).
  INSERT INTO "${flyway:defaultSchema}".events
    (event_id, stream_id, stream_version, category, event_type, data, created_at)
  SELECT p_event_id, s.stream_id,
         COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                    WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0) + 1,
         '$wf', p_type, p_data, "${flyway:defaultSchema}".waymark_now()
    FROM "${flyway:defaultSchema}".streams s
   WHERE s.stream_name = "${flyway:defaultSchema}".wf_stream(p_name, p_id, p_gen)
     AND NOT EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".events e WHERE e.event_id = p_event_id);
  IF NOT FOUND THEN
    SELECT e.data INTO v_present FROM "${flyway:defaultSchema}".events e WHERE e.event_id = p_event_id;
    IF FOUND THEN
      RETURN ARRAY['present', (v_present -> 'result')::text];
    END IF;
    -- the generation's stream does not exist yet
    PERFORM "${flyway:defaultSchema}".append_events(
      ARRAY["${flyway:defaultSchema}".wf_stream(p_name, p_id, p_gen)], ARRAY[-1::bigint], ARRAY[1],
      ARRAY[p_event_id], ARRAY[p_type], ARRAY[p_data], ARRAY[NULL::jsonb],
      ARRAY[NULL::uuid], ARRAY[NULL::uuid], "${flyway:defaultSchema}".waymark_now());
  END IF;
  IF p_terminal IS NOT NULL THEN
    -- a terminal instance holds no lease: the writer's release is folded into this statement
    UPDATE "${flyway:defaultSchema}".workflows
       SET status = p_terminal, result = p_result, failure = p_failure, waiting_on = NULL,
           wake_after = NULL, next_attempt_at = NULL, updated_at = "${flyway:defaultSchema}".waymark_now(), completed_at = "${flyway:defaultSchema}".waymark_now(),
           lease_owner = NULL, lease_expires_at = NULL,
           attempts = CASE WHEN p_terminal = 'completed' THEN 0 ELSE attempts END,
           last_error = CASE WHEN p_terminal = 'completed' THEN NULL ELSE last_error END
     WHERE name = p_name AND id = p_id;
    UPDATE "${flyway:defaultSchema}".workflow_awakeables
       SET status = 'abandoned', completed_at = "${flyway:defaultSchema}".waymark_now()
     WHERE name = p_name AND id = p_id AND status = 'pending';
    IF v_parent_id IS NOT NULL THEN
      PERFORM "${flyway:defaultSchema}".wf_wake(v_parent_name, v_parent_id);
    END IF;
  ELSIF v_status = 'suspended' THEN
    UPDATE "${flyway:defaultSchema}".workflows
       SET status = 'running', wake_after = NULL, waiting_on = NULL, updated_at = "${flyway:defaultSchema}".waymark_now()
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
  IF p_wake_after IS NOT NULL AND p_wake_after <= "${flyway:defaultSchema}".waymark_now() THEN
    RETURN 'resolved';
  END IF;
  UPDATE "${flyway:defaultSchema}".workflows
     SET status = 'suspended', waiting_on = p_waiting, wake_after = p_wake_after, updated_at = "${flyway:defaultSchema}".waymark_now()
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
    ARRAY[NULL::jsonb, NULL::jsonb], ARRAY[NULL::uuid, NULL::uuid], ARRAY[NULL::uuid, NULL::uuid], "${flyway:defaultSchema}".waymark_now());
  UPDATE "${flyway:defaultSchema}".workflows
     SET generation = p_gen + 1, status = 'running', waiting_on = NULL, wake_after = NULL,
         attempts = 0, last_error = NULL, next_attempt_at = NULL, updated_at = "${flyway:defaultSchema}".waymark_now()
   WHERE name = p_name AND id = p_id;
  UPDATE "${flyway:defaultSchema}".workflow_awakeables
     SET status = 'abandoned', completed_at = "${flyway:defaultSchema}".waymark_now()
   WHERE name = p_name AND id = p_id AND generation = p_gen AND status = 'pending';
  RETURN 'rotated';
END
$$;

-- Completes, fails or cancels an awakeable; the first settlement wins. Returns 'settled',
-- 'unknown', or 'already_<status>' with the status that won earlier. The instance lock is taken
-- before the awakeable's row is locked (the awakeable's owner is read first, without a lock: an
-- awakeable never changes owner): an instance's completion locks the instance and then abandons its
-- awakeables, so the reverse order could deadlock a settlement against a completion.
CREATE FUNCTION "${flyway:defaultSchema}".wf_settle_awakeable(
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
     SET status = p_status, payload = p_payload, failure = p_failure, completed_at = "${flyway:defaultSchema}".waymark_now()
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

-- Settles awakeables of any instances in one transaction (group commit of settlements), in array
-- order: each item exactly as wf_settle_awakeable would settle it alone ('settled', 'unknown' or
-- 'already_<status>'; a settlement wakes its instance with wf_wake), except that an instance lock
-- is only try-taken: an item whose instance lock is held elsewhere comes back 'busy', unwritten,
-- and its caller settles it alone with wf_settle_awakeable. The lock order is wf_settle_awakeable's:
-- the owner is read without a lock (an awakeable never changes owner), then the instance lock is
-- taken, then the awakeable's row is locked by its update; a completion locks the instance and then
-- abandons its awakeables, so the reverse order could deadlock. The batch never waits for an
-- instance lock, and it locks rows only of instances whose lock it holds; the other writers of such
-- rows hold no instance lock of theirs and wait for no row the batch holds (a claim, a release or a
-- crash record locks one row; a renewal, and the collector detaching children, skip locked rows), so
-- a batch closes no deadlock cycle. An advisory lock is reentrant: a later item of an instance that
-- an earlier item locked takes it again, and a second settlement of one awakeable sees the first
-- (the first wins). Returns three fields per item, in item order: outcome, owner name, owner id (the
-- owner is NULL when the awakeable is unknown).
CREATE FUNCTION "${flyway:defaultSchema}".wf_settle_awakeables(
  p_ids uuid[], p_statuses text[], p_payloads jsonb[], p_failures text[])
RETURNS text[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
DECLARE
  v_out text[] := '{}';
  v_name text;
  v_id text;
  v_status text;
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
    SELECT a.name, a.id, a.status INTO v_name, v_id, v_status
      FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.awakeable_id = p_ids[i];
    IF NOT FOUND THEN
      v_out := v_out || ARRAY['unknown', NULL, NULL];
    ELSIF v_status <> 'pending' THEN
      v_out := v_out || ARRAY['already_' || v_status, v_name, v_id];
    ELSIF NOT pg_try_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || v_name || '#' || v_id, 0)) THEN
      v_out := v_out || ARRAY['busy', v_name, v_id];
    ELSE
      UPDATE "${flyway:defaultSchema}".workflow_awakeables
         SET status = p_statuses[i], payload = p_payloads[i], failure = p_failures[i],
             completed_at = "${flyway:defaultSchema}".waymark_now()
       WHERE awakeable_id = p_ids[i] AND status = 'pending';
      IF FOUND THEN
        PERFORM "${flyway:defaultSchema}".wf_wake(v_name, v_id);
        v_out := v_out || ARRAY['settled', v_name, v_id];
      ELSE -- settled, or abandoned by the instance's end, between the read and the lock
        SELECT a.status INTO v_status FROM "${flyway:defaultSchema}".workflow_awakeables a
         WHERE a.awakeable_id = p_ids[i];
        IF FOUND THEN
          v_out := v_out || ARRAY['already_' || v_status, v_name, v_id];
        ELSE
          v_out := v_out || ARRAY['unknown', NULL, NULL];
        END IF;
      END IF;
    END IF;
  END LOOP;
  RETURN v_out;
END
$$;

-- The part of a start after its checks and its lock: creates the instance unless it exists.
-- Returns {outcome, status, input, epoch} as wf_start does; an owner's lease epoch comes from
-- workflow_lease_epochs. Callers hold the instance lock, taken before their transaction's first
-- write (wf_start and wf_journal see to both).
-- A child is created only while its parent is running or suspended, and otherwise refused with
-- {parent_ended, the parent's status or 'missing', NULL, NULL}. Its creation holds the parent's lock
-- too (try-taken in a batch, like a child's completion; the lock order is the child's, then the
-- parent's). A cancellation commits the parent's terminal marker under that lock and then cancels
-- the parent's live children, each in a transaction of its own, so a child is never created after
-- its parent was cancelled, and a cascade cut short by a crash is finished by the resume worker
-- (wf_orphaned_children). A start of an existing instance (attaching to it) takes no parent lock.
CREATE FUNCTION "${flyway:defaultSchema}".wf_create(
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
            jsonb_build_object('input', p_input, 'generation', 0), "${flyway:defaultSchema}".waymark_now());
  ELSE -- a stream of that name outlived its instance row: append to it with the store's checks
    PERFORM "${flyway:defaultSchema}".append_events(
      ARRAY[v_stream], ARRAY[-1::bigint], ARRAY[1], ARRAY[p_event_id], ARRAY['WorkflowStarted'],
      ARRAY[jsonb_build_object('input', p_input, 'generation', 0)], ARRAY[NULL::jsonb],
      ARRAY[NULL::uuid], ARRAY[NULL::uuid], "${flyway:defaultSchema}".waymark_now());
  END IF;
  IF p_owner IS NOT NULL THEN
    v_epoch := nextval('"${flyway:defaultSchema}".workflow_lease_epochs');
  END IF;
  INSERT INTO "${flyway:defaultSchema}".workflows
    (name, id, status, input, parent_name, parent_id, lease_owner, lease_epoch, lease_expires_at)
  VALUES (p_name, p_id, 'running', p_input, p_parent_name, p_parent_id, p_owner, v_epoch,
          CASE WHEN p_owner IS NULL THEN NULL ELSE "${flyway:defaultSchema}".waymark_now() + p_ttl_ms * interval '1 millisecond' END);
  RETURN ARRAY['created', 'running', NULL, v_epoch::text];
END
$$;

-- Journals entries of distinct instances in one transaction: starts (type 'WorkflowStarted', with
-- the input in p_data and parent, owner and lease length in the last four arrays), steps, and
-- completions (p_terminals 'completed', the result in p_results). Every lock the entries need (the
-- instance's; for a completion, and for a child's creation, its parent's) is try-taken before the
-- first write, so the transaction's xid comes after all of them and per-stream order agrees with the
-- global order; no batch ever waits for a lock. An entry whose locks are held elsewhere comes back
-- 'busy', unwritten; its caller writes it on its own. Every other entry gets exactly what wf_start
-- or wf_append would give it. Returns four fields per entry, in entry order: a start's {outcome,
-- status, input, epoch}, or an append's {kind, detail, NULL, NULL}.
-- A step with a non-null p_awakeables[i] creates that awakeable (label p_labels[i], of the entry's
-- generation) in the same transaction, exactly when its entry is written ('appended'): a replay
-- that finds the entry present finds the row too.
CREATE FUNCTION "${flyway:defaultSchema}".wf_journal(
  p_names text[], p_ids text[], p_gens integer[], p_event_ids uuid[], p_types text[], p_data jsonb[],
  p_epochs bigint[], p_terminals text[], p_results jsonb[],
  p_parent_names text[], p_parent_ids text[], p_owners text[], p_ttls bigint[],
  p_awakeables uuid[], p_labels text[])
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
  v_appended text[];
  v_creates boolean := false;
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = 'wf_journal refused: the transaction already wrote before journaling';
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM002',
      MESSAGE = format('wf_journal refused: isolation level is %s', current_setting('transaction_isolation'));
  END IF;
  -- Every lock before the first write. v_fast marks the fenced steps, and the
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
    v_creates := v_creates OR p_awakeables[i] IS NOT NULL;
    IF v_first < i THEN
      v_fast[v_first] := false;
    ELSIF v_locked[i] AND p_epochs[i] IS NOT NULL AND p_types[i] <> 'WorkflowStarted'
          AND (p_terminals[i] IS NULL OR (p_terminals[i] = 'completed' AND v_parent_id IS NULL)) THEN
      v_fast[i] := true;
      v_completions := v_completions OR p_terminals[i] IS NOT NULL;
    END IF;
  END LOOP;
  IF true = ANY (v_fast) THEN
    -- The marked entries, all at once: each is inserted exactly when the one-statement path of
    -- wf_append would insert a step (instance found at this epoch, running, at this generation, its
    -- stream present, no entry with this id), with the same stream version. Marked entries are of
    -- distinct instances, and an entry id derives from its instance, so a returned id names one
    -- marked entry. Entries this statement did not write were not written at all and take the
    -- entry-by-entry path below.
    WITH written AS (
      INSERT INTO "${flyway:defaultSchema}".events
        (event_id, stream_id, stream_version, category, event_type, data, created_at)
      SELECT x.event_id, s.stream_id,
             COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                        WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0) + 1,
             '$wf', x.type, x.data, "${flyway:defaultSchema}".waymark_now()
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
    IF v_creates THEN -- the awakeables of the steps written above
      INSERT INTO "${flyway:defaultSchema}".workflow_awakeables (awakeable_id, name, id, generation, label)
      SELECT x.awakeable, x.name, x.id, x.gen, x.label
        FROM unnest(p_names, p_ids, p_gens, p_event_ids, p_awakeables, p_labels)
             AS x(name, id, gen, event_id, awakeable, label)
       WHERE x.awakeable IS NOT NULL AND x.event_id = ANY (v_written);
    END IF;
  END IF;
  IF v_completions THEN
    -- The completions written above: what wf_append does after writing a completion of an instance
    -- without a parent (the instance closes and releases its lease, pending awakeables are abandoned).
    UPDATE "${flyway:defaultSchema}".workflows w
       SET status = 'completed', result = x.result, failure = NULL, waiting_on = NULL,
           wake_after = NULL, next_attempt_at = NULL, updated_at = "${flyway:defaultSchema}".waymark_now(), completed_at = "${flyway:defaultSchema}".waymark_now(),
           lease_owner = NULL, lease_expires_at = NULL, attempts = 0, last_error = NULL
      FROM unnest(p_names, p_ids, p_event_ids, p_terminals, p_results) AS x(name, id, event_id, terminal, result)
     WHERE x.terminal = 'completed' AND x.event_id = ANY (v_written) AND w.name = x.name AND w.id = x.id;
    UPDATE "${flyway:defaultSchema}".workflow_awakeables a
       SET status = 'abandoned', completed_at = "${flyway:defaultSchema}".waymark_now()
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
      v_appended := "${flyway:defaultSchema}".wf_append(p_names[i], p_ids[i], p_gens[i], p_event_ids[i],
        p_types[i], p_data[i], p_epochs[i], p_terminals[i], p_results[i], NULL);
      IF v_appended[1] = 'appended' AND p_awakeables[i] IS NOT NULL THEN
        INSERT INTO "${flyway:defaultSchema}".workflow_awakeables (awakeable_id, name, id, generation, label)
        VALUES (p_awakeables[i], p_names[i], p_ids[i], p_gens[i], p_labels[i]);
      END IF;
      v_out := v_out || v_appended || ARRAY[NULL, NULL]::text[];
    END IF;
  END LOOP;
  RETURN v_out;
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
SET jit = off
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

-- Runnable instances (running, or suspended with a due wake time; not paced by a crash) of the given
-- names, or of every other name when p_unknown, oldest first. The walk covers the active instances
-- only (the partial index of running and suspended rows), however many finished rows the table holds.
CREATE FUNCTION "${flyway:defaultSchema}".wf_discover(p_names text[], p_unknown boolean, p_limit integer)
RETURNS TABLE (name text, id text)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT w.name, w.id FROM "${flyway:defaultSchema}".workflows w
     WHERE w.status IN ('running', 'suspended')
       AND (w.status = 'running' OR w.wake_after <= "${flyway:defaultSchema}".waymark_now())
       AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= "${flyway:defaultSchema}".waymark_now())
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
SET jit = off
AS $$
BEGIN
  RETURN (SELECT count(*) FROM "${flyway:defaultSchema}".workflows w
           WHERE w.status IN ('running', 'suspended')
             AND (w.status = 'running' OR w.wake_after <= "${flyway:defaultSchema}".waymark_now())
             AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= "${flyway:defaultSchema}".waymark_now()));
END
$$;

CREATE FUNCTION "${flyway:defaultSchema}".wf_count_pending_awakeables()
RETURNS bigint
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
  RETURN (SELECT count(*) FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.status = 'pending');
END
$$;

-- Claims the lease when the instance is runnable (running, or suspended with a due wake time; not
-- paced by a crash) and unleased or its lease expired. Returns the new epoch, the previous expiry
-- and the claim time, or no row. The epoch comes from workflow_lease_epochs (and is still above the
-- instance's last epoch should someone have written a larger one by hand).
CREATE FUNCTION "${flyway:defaultSchema}".wf_claim(p_name text, p_id text, p_owner text, p_ttl_ms bigint)
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
     OR ((v_status = 'running' OR (v_status = 'suspended' AND v_wake_after <= "${flyway:defaultSchema}".waymark_now()))
         AND (v_owner IS NULL OR v_expires < "${flyway:defaultSchema}".waymark_now())
         AND (v_next_attempt IS NULL OR v_next_attempt <= "${flyway:defaultSchema}".waymark_now())) IS NOT TRUE THEN
    RETURN;
  END IF;
  UPDATE "${flyway:defaultSchema}".workflows w
     SET lease_owner = p_owner,
         lease_epoch = greatest(w.lease_epoch + 1, nextval('"${flyway:defaultSchema}".workflow_lease_epochs')),
         lease_expires_at = "${flyway:defaultSchema}".waymark_now() + p_ttl_ms * interval '1 millisecond'
   WHERE w.name = p_name AND w.id = p_id
  RETURNING w.lease_epoch INTO epoch;
  previous_expiry := v_expires;
  claimed_at := "${flyway:defaultSchema}".waymark_now();
  RETURN NEXT;
END
$$;

-- Extends the leases p_owner holds on the given instances; returns how many were extended.
-- It never waits for a row lock, so it cannot take part in a deadlock: it locks the rows in key
-- order and skips any that another transaction holds (a journal write, a claim, a cancel; all
-- short). A skipped lease is extended by the next renewal, a third of the TTL later.
CREATE FUNCTION "${flyway:defaultSchema}".wf_renew(p_owner text, p_names text[], p_ids text[], p_ttl_ms bigint)
RETURNS integer
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
DECLARE
  v_n integer;
BEGIN
  WITH locked AS (
    SELECT w.name, w.id FROM "${flyway:defaultSchema}".workflows w
      JOIN unnest(p_names, p_ids) AS k(name, id) ON w.name = k.name AND w.id = k.id
     WHERE w.lease_owner = p_owner
     ORDER BY w.name, w.id
       FOR UPDATE OF w SKIP LOCKED
  )
  UPDATE "${flyway:defaultSchema}".workflows w
     SET lease_expires_at = "${flyway:defaultSchema}".waymark_now() + p_ttl_ms * interval '1 millisecond'
    FROM locked l
   WHERE w.name = l.name AND w.id = l.id AND w.lease_owner = p_owner;
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
SET jit = off
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

-- Records a crash of a running or suspended instance, unfenced: one more attempt, the error, and
-- the next attempt time (backoff p_base_ms * 2^attempts, capped at p_cap_ms). Returns the attempts,
-- or NULL when the instance is missing or terminal. Waymark calls the fenced form below.
CREATE FUNCTION "${flyway:defaultSchema}".wf_record_crash(
  p_name text, p_id text, p_error text, p_base_ms bigint, p_cap_ms bigint)
RETURNS integer
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
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
       SET attempts = w.attempts + 1, last_error = p_error, updated_at = "${flyway:defaultSchema}".waymark_now(),
           next_attempt_at = "${flyway:defaultSchema}".waymark_now() + LEAST(p_base_ms * power(2, w.attempts), p_cap_ms) * interval '1 millisecond'
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
SET jit = off
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
SET jit = off
AS $$
BEGIN
  RETURN QUERY SELECT * FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.awakeable_id = p_awakeable;
END
$$;

-- Instances the collector may collect, in the order they finished: finished (completed, cancelled,
-- failed) at least p_retention ago by the database clock, except a child whose parent could still
-- read it (running, suspended, or failed: a retry revives a failed parent, which resumes where it
-- failed and may await the child), and a cancelled instance while it has live children (the resume
-- worker finds the children a cut-short cascade left through wf_orphaned_children, which collecting
-- the parent first would hide for good). wf_collect checks the same again under the locks.
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
       AND w.completed_at <= "${flyway:defaultSchema}".waymark_now() - p_retention
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

-- Collects one instance: 'deleted' (its journal streams of every generation with their events, its
-- awakeables and its row, and its children detached: their parent_name and parent_id cleared, so
-- that an instance started later under the same name and id does not inherit them), 'kept' (not
-- collectable, as wf_gc_candidates decides), 'missing', or 'busy' (its lock or a child's row is
-- held elsewhere; nothing written, a later pass collects it).
-- The children's rows are locked before they are detached, without waiting: a child's end updates
-- its own row and then takes its parent's lock to wake it, and this function holds that lock, so
-- waiting here for the child's row could deadlock. No child is added meanwhile: a child's creation
-- takes its parent's lock too. A child whose end read its parent just before the parent was
-- collected wakes the missing row (nothing) or the instance started under that id since (a spurious
-- wake: it replays and suspends again); the next read finds no parent. wf_journal reads a
-- completing child's parent before taking the parent's lock, as one that never changes: it changes
-- only here, to none, under that lock, so a stale read finds the lock held ('busy') or sends the
-- entry down wf_append's path, which reads the parent again under the child's lock.
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
  v_children bigint;
  v_locked bigint;
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
     OR v_row.completed_at > "${flyway:defaultSchema}".waymark_now() - p_retention
     OR EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows p
                 WHERE v_row.parent_id IS NOT NULL AND p.name = v_row.parent_name AND p.id = v_row.parent_id
                   AND p.status IN ('running', 'suspended', 'failed') OFFSET 0)
     OR (v_row.status = 'cancelled'
         AND EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows c
                      WHERE c.parent_name = p_name AND c.parent_id = p_id
                        AND c.status IN ('running', 'suspended') OFFSET 0)) THEN
    RETURN 'kept';
  END IF;
  -- Detach the children (see the header): their rows locked first, none waited for.
  SELECT count(*) INTO v_children FROM "${flyway:defaultSchema}".workflows c
   WHERE c.parent_name = p_name AND c.parent_id = p_id AND c.parent_id IS NOT NULL;
  IF v_children > 0 THEN
    SELECT count(*) INTO v_locked
      FROM (SELECT 1 FROM "${flyway:defaultSchema}".workflows c
             WHERE c.parent_name = p_name AND c.parent_id = p_id AND c.parent_id IS NOT NULL
               FOR UPDATE SKIP LOCKED) l;
    IF v_locked < v_children THEN
      RETURN 'busy';
    END IF;
    UPDATE "${flyway:defaultSchema}".workflows c SET parent_name = NULL, parent_id = NULL
     WHERE c.parent_name = p_name AND c.parent_id = p_id AND c.parent_id IS NOT NULL;
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

-- A parent's children (every one, or the live ones only) and an instance's awakeables: by index
-- whatever the plan's age, as every lookup here.
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

-- Revives a failed instance: running again with a fresh attempt budget, unleased; false if it is
-- not failed. A failed instance abandoned its pending awakeables (as a completion or a
-- cancellation does); the revived run resumes where it failed and may await them, so the
-- awakeables of its current generation that were abandoned are pending again (the earlier
-- generations' stay abandoned: a continue-as-new abandoned them for good). A value sent while the
-- instance was failed was refused ('superseded') and must be sent again. The instance lock is taken
-- first, the order every writer of an instance and its awakeables uses, so a retry and a settlement
-- never deadlock.
CREATE FUNCTION "${flyway:defaultSchema}".wf_retry(p_name text, p_id text)
RETURNS boolean
LANGUAGE plpgsql
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
DECLARE
  v_gen integer;
BEGIN
  PERFORM "${flyway:defaultSchema}".wf_lock(p_name, p_id);
  UPDATE "${flyway:defaultSchema}".workflows
     SET status = 'running', attempts = 0, last_error = NULL, failure = NULL, next_attempt_at = NULL,
         completed_at = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = "${flyway:defaultSchema}".waymark_now()
   WHERE name = p_name AND id = p_id AND status = 'failed'
  RETURNING generation INTO v_gen;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE "${flyway:defaultSchema}".workflow_awakeables
     SET status = 'pending', completed_at = NULL
   WHERE name = p_name AND id = p_id AND generation = v_gen AND status = 'abandoned';
  RETURN true;
END
$$;

-- Records a crash, fenced on the lease epoch like every other write of a run: counts it only while
-- the instance still has the lease epoch of the attempt that crashed, so a worker that lost its
-- lease does not count its crash against the instance another worker now runs. One more attempt,
-- the error, and the next attempt time (backoff p_base_ms * 2^attempts, capped at p_cap_ms).
-- Returns the attempts, or NULL when the instance is missing, terminal or at another epoch.
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
       SET attempts = w.attempts + 1, last_error = p_error, updated_at = "${flyway:defaultSchema}".waymark_now(),
           next_attempt_at = "${flyway:defaultSchema}".waymark_now() + LEAST(p_base_ms * power(2, w.attempts), p_cap_ms) * interval '1 millisecond'
     WHERE w.name = p_name AND w.id = p_id
    RETURNING w.attempts INTO v_attempts;
  END IF;
  RETURN v_attempts;
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

-- Claims up to p_limit due instances of the given names (running, or suspended with a due wake time;
-- unleased or with an expired lease; not paced by a crash), oldest due first, skipping rows another
-- transaction holds. Each claimed row gets a new epoch from the sequence, as wf_claim does. The last
-- row returned has a null name and carries the next future wake time (null if none), so that the
-- caller can sleep exactly until then.
CREATE FUNCTION "${flyway:defaultSchema}".wf_claim_due(p_names text[], p_owner text, p_ttl_ms bigint, p_limit integer)
RETURNS TABLE (name text, id text, epoch bigint, previous_expiry timestamptz, claimed_at timestamptz,
               next_due timestamptz)
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
  IF p_limit > 0 THEN
    RETURN QUERY
      WITH c AS (
        SELECT w.name, w.id, w.lease_expires_at AS prev
          FROM "${flyway:defaultSchema}".workflows w
         WHERE (w.status = 'running' OR (w.status = 'suspended' AND w.wake_after IS NOT NULL))
           AND (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END) <= "${flyway:defaultSchema}".waymark_now()
           AND (w.lease_owner IS NULL OR w.lease_expires_at < "${flyway:defaultSchema}".waymark_now())
           AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= "${flyway:defaultSchema}".waymark_now())
           AND w.name = ANY (p_names)
         ORDER BY (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END)
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED)
      UPDATE "${flyway:defaultSchema}".workflows w
         SET lease_owner = p_owner,
             lease_epoch = greatest(w.lease_epoch + 1, nextval('"${flyway:defaultSchema}".workflow_lease_epochs')),
             lease_expires_at = "${flyway:defaultSchema}".waymark_now() + p_ttl_ms * interval '1 millisecond'
        FROM c
       WHERE w.name = c.name AND w.id = c.id
      RETURNING w.name, w.id, w.lease_epoch, c.prev, "${flyway:defaultSchema}".waymark_now(), NULL::timestamptz;
  END IF;
  RETURN QUERY
    SELECT NULL::text, NULL::text, NULL::bigint, NULL::timestamptz, "${flyway:defaultSchema}".waymark_now(),
           (SELECT w.wake_after FROM "${flyway:defaultSchema}".workflows w
             WHERE (w.status = 'running' OR (w.status = 'suspended' AND w.wake_after IS NOT NULL))
               AND (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END) > "${flyway:defaultSchema}".waymark_now()
             ORDER BY (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END)
             LIMIT 1);
END
$$;

-- The backlog, from the index of due work: instances runnable now (in flight included), those
-- sleeping until a wake time still ahead, those of the runnable ones waiting for a worker (unleased or
-- with an expired lease, not paced by a crash), the due time of the oldest waiting one, and the
-- pending awakeables.
CREATE FUNCTION "${flyway:defaultSchema}".wf_backlog()
RETURNS TABLE (runnable bigint, sleeping bigint, waiting bigint, oldest_waiting timestamptz,
               pending_awakeables bigint, sampled_at timestamptz)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    SELECT count(*) FILTER (WHERE x.due <= "${flyway:defaultSchema}".waymark_now()),
           count(*) FILTER (WHERE x.due > "${flyway:defaultSchema}".waymark_now()),
           count(*) FILTER (WHERE x.due <= "${flyway:defaultSchema}".waymark_now() AND x.free),
           min(x.due) FILTER (WHERE x.due <= "${flyway:defaultSchema}".waymark_now() AND x.free),
           (SELECT count(*) FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.status = 'pending'),
           "${flyway:defaultSchema}".waymark_now()
      FROM (SELECT (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END) AS due,
                   ((w.lease_owner IS NULL OR w.lease_expires_at < "${flyway:defaultSchema}".waymark_now())
                    AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= "${flyway:defaultSchema}".waymark_now())) AS free
              FROM "${flyway:defaultSchema}".workflows w
             WHERE (w.status = 'running' OR (w.status = 'suspended' AND w.wake_after IS NOT NULL))) x;
END
$$;
