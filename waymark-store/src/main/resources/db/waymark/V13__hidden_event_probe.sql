-- Waymark, version 13: a cheap probe for committed events still behind the visibility horizon.
--
-- A reader woken by an append may find nothing new: the event is committed but hidden, because a
-- transaction with a smaller id (any writer in the cluster: a checkpoint, a lease renewal, the
-- application's own) was still open. That transaction's end signals nobody, so the reader slept
-- until its next poll (a second by default). Readers now ask, after a short page, whether any
-- committed event is hidden, and if so read again within milliseconds instead.
-- EXISTS stops at the first row of the (tx_id, global_position) index above the horizon; the
-- function plans like version 9's reads (the index walk whatever the table's size when planned).

CREATE FUNCTION "${flyway:defaultSchema}".has_hidden_events()
RETURNS boolean
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM "${flyway:defaultSchema}".events e
                  WHERE e.tx_id >= pg_snapshot_xmin(pg_current_snapshot()));
END
$$;
