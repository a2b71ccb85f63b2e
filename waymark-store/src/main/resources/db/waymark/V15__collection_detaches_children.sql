-- Waymark, version 15: garbage collection detaches a collected parent's children.
--
-- Version 10 says that a collected parent's unfinished children are detached, but wf_collect only
-- deleted the parent's row: its children kept parent_name and parent_id. An instance started later
-- under the collected parent's name and id inherited them: cancelling it cancelled them, their end
-- woke it, and garbage collection kept them for it. wf_collect now clears parent_name and parent_id
-- of every child of the instance it deletes, in the same transaction; otherwise it is version 14's.
--
-- The children's rows are locked before that update, without waiting, and the instance is 'busy'
-- (nothing written; a later pass collects it) if one is locked elsewhere: a child's end updates its
-- own row and then takes its parent's lock to wake it, and this function holds that lock, so waiting
-- here for the child's row could deadlock. No child is added meanwhile: a child's creation takes
-- its parent's lock too (version 14). A child whose end read its parent just before the parent was
-- collected wakes the missing row (nothing) or the instance started under that id since (a spurious
-- wake: it replays and suspends again); the next read finds no parent. wf_journal reads a
-- completing child's parent before taking the parent's lock, as one that never changes: it changes
-- only here, to none, under that lock, so a stale read finds the lock held ('busy') or sends the
-- entry down wf_append's path, which reads the parent again under the child's lock.

-- As in version 14, and the children of the deleted instance are detached.
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
  -- Detach the children (see the top of this file): their rows locked first, none waited for.
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

-- Children that earlier versions left pointing at a collected parent (a parent without a row: a
-- child is created only while its parent's row exists, and only collection deletes one) are
-- detached here, before an instance started under that parent's name and id could inherit them.
UPDATE "${flyway:defaultSchema}".workflows c SET parent_name = NULL, parent_id = NULL
 WHERE c.parent_id IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".workflows p
                    WHERE p.name = c.parent_name AND p.id = c.parent_id);
