-- Waymark workflows, version 5: starts join the shared journal transactions (wf_journal), and
-- every journal write takes fewer statements. wf_start and wf_append keep their signatures and
-- every outcome of versions 3 and 4. PL/pgSQL pays
-- executor start-up and shutdown for every SQL statement it runs (PERFORM included), but evaluates a
-- plain expression such as an IF condition directly; at a hundred-odd microseconds per journal
-- write, the statements were most of the server's time. So: locks are taken in IF conditions, a
-- step's stream lookup, head read, first-writer check and insert are one INSERT ... SELECT, and a
-- start writes its stream, event and instance row directly instead of through append_events.

-- The part of a start after its checks and its lock: creates the instance unless it exists.
-- Returns {outcome, status, input, epoch} as wf_start does. Callers hold the instance lock, taken
-- before their transaction's first write (wf_start and wf_journal see to both).
CREATE FUNCTION "${flyway:defaultSchema}".wf_create(
  p_name text, p_id text, p_input jsonb, p_event_id uuid,
  p_parent_name text, p_parent_id text, p_owner text, p_ttl_ms bigint)
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_status text;
  v_input jsonb;
  v_stream text;
  v_stream_id bigint;
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
  INSERT INTO "${flyway:defaultSchema}".workflows
    (name, id, status, input, parent_name, parent_id, lease_owner, lease_epoch, lease_expires_at)
  VALUES (p_name, p_id, 'running', p_input, p_parent_name, p_parent_id, p_owner,
          CASE WHEN p_owner IS NULL THEN 0 ELSE 1 END,
          CASE WHEN p_owner IS NULL THEN NULL ELSE now() + p_ttl_ms * interval '1 millisecond' END);
  RETURN ARRAY['created', 'running', NULL, CASE WHEN p_owner IS NULL THEN '0' ELSE '1' END];
END
$$;

-- Durable, idempotent start; see version 3. Same checks as append_events (no earlier write in the
-- transaction, READ COMMITTED), then the instance lock, taken before the first write: it serializes
-- every write of the instance's journal streams (only these functions write '$wf-' streams).
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_start(
  p_name text, p_id text, p_input jsonb, p_event_id uuid,
  p_parent_name text, p_parent_id text, p_owner text, p_ttl_ms bigint)
RETURNS text[]
LANGUAGE plpgsql AS $$
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
  RETURN "${flyway:defaultSchema}".wf_create(p_name, p_id, p_input, p_event_id, p_parent_name, p_parent_id,
                                             p_owner, p_ttl_ms);
END
$$;

-- One journal entry; outcomes exactly as in version 3 (appended, present, refused, lease_lost,
-- stale, missing), checked in the same order: the lease first, then an entry with this id, then
-- the instance's status, then its generation.
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_append(
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
BEGIN
  -- The instance lock, before the first write: see version 3.
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
           '$wf', p_type, p_data, now()
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
         '$wf', p_type, p_data, now()
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

-- Journals entries of distinct instances in one transaction: starts (type 'WorkflowStarted', with
-- the input in p_data and parent, owner and lease length in the last four arrays), steps, and
-- completions (p_terminals 'completed', the result in p_results). Replaces version 4's
-- wf_append_steps (dropped below) and keeps its rules: every lock the entries need (the instance's,
-- and for a completion its parent's) is try-taken before the first write, so the transaction's xid
-- comes after all of them and per-stream order agrees with the global order; no batch ever waits
-- for a lock. An entry whose locks are held elsewhere comes back 'busy', unwritten; its caller
-- writes it on its own. Every other entry gets exactly what wf_start or wf_append would give it.
-- Returns four fields per entry, in entry order: a start's {outcome, status, input, epoch}, or an
-- append's {kind, detail, NULL, NULL}.
CREATE FUNCTION "${flyway:defaultSchema}".wf_journal(
  p_names text[], p_ids text[], p_gens integer[], p_event_ids uuid[], p_types text[], p_data jsonb[],
  p_epochs bigint[], p_terminals text[], p_results jsonb[],
  p_parent_names text[], p_parent_ids text[], p_owners text[], p_ttls bigint[])
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_n integer := coalesce(array_length(p_names, 1), 0);
  v_locked boolean[] := array_fill(false, ARRAY[greatest(v_n, 1)]);
  v_out text[] := '{}';
  v_parent_name text;
  v_parent_id text;
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = 'wf_journal refused: the transaction already wrote before journaling';
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM002',
      MESSAGE = format('wf_journal refused: isolation level is %s', current_setting('transaction_isolation'));
  END IF;
  FOR i IN 1 .. v_n LOOP
    v_locked[i] := pg_try_advisory_xact_lock(
      hashtextextended('${flyway:defaultSchema}#wf#' || p_names[i] || '#' || p_ids[i], 0));
    IF v_locked[i] AND p_terminals[i] IS NOT NULL THEN
      SELECT w.parent_name, w.parent_id INTO v_parent_name, v_parent_id
        FROM "${flyway:defaultSchema}".workflows w WHERE w.name = p_names[i] AND w.id = p_ids[i];
      IF v_parent_id IS NOT NULL THEN -- a parent never changes: read before its lock is fine
        v_locked[i] := pg_try_advisory_xact_lock(
          hashtextextended('${flyway:defaultSchema}#wf#' || v_parent_name || '#' || v_parent_id, 0));
      END IF;
    END IF;
  END LOOP;
  FOR i IN 1 .. v_n LOOP
    IF NOT v_locked[i] THEN
      v_out := v_out || ARRAY['busy', NULL, NULL, NULL];
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

-- Version 4's batch function: wf_journal does its work and more. A process of an older version
-- that still calls it gets an error for the batch, and then journals each entry on its own.
DROP FUNCTION "${flyway:defaultSchema}".wf_append_steps(text[], text[], integer[], uuid[], text[], jsonb[],
  bigint[], text[], jsonb[]);
