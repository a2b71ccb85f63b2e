-- Waymark, version 12: a retried workflow can be woken by the awakeables it was waiting for.
--
-- A workflow that fails abandons its pending awakeables (as a completion or a cancellation does).
-- wf_retry revives a failed instance, which resumes where it failed, but left those awakeables
-- abandoned: its await then read them as cancelled and failed again, and completing one returned
-- "superseded" before and after the retry. A retry now returns the awakeables of the instance's
-- current generation that were abandoned to pending (the earlier generations' stay abandoned: a
-- continue-as-new abandoned them for good). A value sent while the instance was failed was refused
-- ("superseded") and must be sent again.
-- The instance lock is taken first, the order every writer of an instance and its awakeables uses
-- (version 11), so a retry and a settlement never deadlock.

CREATE OR REPLACE FUNCTION "${flyway:defaultSchema}".wf_retry(p_name text, p_id text)
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
         completed_at = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
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
