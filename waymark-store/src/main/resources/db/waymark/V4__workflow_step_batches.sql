-- Waymark workflows, version 4: journal entries of many instances in one transaction.
-- Each entry gets exactly what wf_append gives it (fencing, first writer wins, status upkeep);
-- the batch only shares one commit among instances whose runs journal a step at the same time.

-- wf_stream again, now inlinable: its body casts the generation to text explicitly, so every
-- operator in it is immutable and the planner folds it into the calling query (with the implicit
-- text || integer of version 3, a STABLE operator, each call parsed and planned the body again:
-- about a tenth of the server's time per journal write). Same names as before.
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_stream(p_name text, p_id text, p_gen integer)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT '$wf-' || p_name || '-' || p_id || CASE WHEN p_gen > 0 THEN '#' || p_gen::text ELSE '' END
$$;

-- wf_lock again, in PL/pgSQL: a SQL-language function that cannot be inlined is parsed and planned
-- on every call; PL/pgSQL keeps its plan for the session. Same lock key as before.
CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_lock(p_name text, p_id text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}#wf#' || p_name || '#' || p_id, 0));
END
$$;

-- Journals entries of distinct instances: steps, and completion markers (p_terminals holds NULL
-- for a step, 'completed' for a completion; p_results the completion's result). Every lock the
-- entries need is taken, without waiting, before the first write: the instance's, and for a
-- completion also its parent's (wf_wake takes it again to wake the parent). The transaction's xid
-- is assigned only after all of them are held, so each journal stream's order still agrees with
-- the global order (see append_events), and no batch ever waits for a lock, so batches cannot
-- deadlock. An entry whose locks are held elsewhere comes back 'busy' and is not written; its
-- caller journals it on its own. Returns kind and detail per entry, flattened in entry order.
CREATE FUNCTION "${flyway:defaultSchema}".wf_append_steps(
  p_names text[], p_ids text[], p_gens integer[], p_event_ids uuid[], p_types text[], p_data jsonb[],
  p_epochs bigint[], p_terminals text[], p_results jsonb[])
RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  v_n integer := coalesce(array_length(p_names, 1), 0);
  v_locked boolean[] := array_fill(false, ARRAY[greatest(v_n, 1)]);
  v_out text[] := '{}';
  v_r text[];
  v_parent_name text;
  v_parent_id text;
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = 'wf_append_steps refused: the transaction already wrote before journaling';
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
    IF v_locked[i] THEN
      v_r := "${flyway:defaultSchema}".wf_append(p_names[i], p_ids[i], p_gens[i], p_event_ids[i], p_types[i],
        p_data[i], p_epochs[i], p_terminals[i], p_results[i], NULL);
    ELSE
      v_r := ARRAY['busy', NULL];
    END IF;
    v_out := v_out || v_r;
  END LOOP;
  RETURN v_out;
END
$$;
