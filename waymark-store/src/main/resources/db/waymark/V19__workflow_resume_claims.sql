-- Waymark, version 20: resume workers claim due work in one statement, and the backlog is measured.
--
-- Before: every resume pass read the oldest runnable instances (leased ones included), then claimed
-- each with a statement of its own; two workers read the same oldest batch and lease-skipped half of
-- each other's candidates, and instances run by an engine (leased, running) took places in every
-- batch. Now a pass claims up to N due, unleased instances with FOR UPDATE SKIP LOCKED in one
-- statement: workers take disjoint batches, and an idle pass costs that one statement.

-- Due work in due order: a running instance is due since its last change, a suspended one at its
-- wake time (awakeables and children without a deadline have none and are not in the index: their
-- settlement makes the instance running).
CREATE INDEX workflows_due_idx ON "${flyway:defaultSchema}".workflows
  ((CASE WHEN status = 'running' THEN updated_at ELSE wake_after END))
  WHERE status = 'running' OR (status = 'suspended' AND wake_after IS NOT NULL);

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
           AND (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END) <= now()
           AND (w.lease_owner IS NULL OR w.lease_expires_at < now())
           AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= now())
           AND w.name = ANY (p_names)
         ORDER BY (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END)
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED)
      UPDATE "${flyway:defaultSchema}".workflows w
         SET lease_owner = p_owner,
             lease_epoch = greatest(w.lease_epoch + 1, nextval('"${flyway:defaultSchema}".workflow_lease_epochs')),
             lease_expires_at = now() + p_ttl_ms * interval '1 millisecond'
        FROM c
       WHERE w.name = c.name AND w.id = c.id
      RETURNING w.name, w.id, w.lease_epoch, c.prev, now(), NULL::timestamptz;
  END IF;
  RETURN QUERY
    SELECT NULL::text, NULL::text, NULL::bigint, NULL::timestamptz, now(),
           (SELECT w.wake_after FROM "${flyway:defaultSchema}".workflows w
             WHERE (w.status = 'running' OR (w.status = 'suspended' AND w.wake_after IS NOT NULL))
               AND (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END) > now()
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
    SELECT count(*) FILTER (WHERE x.due <= now()),
           count(*) FILTER (WHERE x.due > now()),
           count(*) FILTER (WHERE x.due <= now() AND x.free),
           min(x.due) FILTER (WHERE x.due <= now() AND x.free),
           (SELECT count(*) FROM "${flyway:defaultSchema}".workflow_awakeables a WHERE a.status = 'pending'),
           now()
      FROM (SELECT (CASE WHEN w.status = 'running' THEN w.updated_at ELSE w.wake_after END) AS due,
                   ((w.lease_owner IS NULL OR w.lease_expires_at < now())
                    AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= now())) AS free
              FROM "${flyway:defaultSchema}".workflows w
             WHERE (w.status = 'running' OR (w.status = 'suspended' AND w.wake_after IS NOT NULL))) x;
END
$$;
