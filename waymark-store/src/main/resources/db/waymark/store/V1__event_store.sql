-- Waymark event store schema (baseline of waymark-store).
-- Every object is schema-qualified: this script must work whatever the session's search_path is.
-- Global order is (tx_id, global_position): see DESIGN.md decision 1 and EventStore's javadoc.

-- A stream's version is not stored: it is the largest stream_version of its events, read under
-- the stream's lock. That keeps the append free of an UPDATE (and its WAL) per stream.
-- category and stream_hash are plain columns written once, when the stream is created.
CREATE TABLE "${flyway:defaultSchema}".streams (
  stream_id   bigint GENERATED ALWAYS AS IDENTITY,
  stream_name text NOT NULL,
  category    text NOT NULL,
  stream_hash integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  deleted_at  timestamptz,
  CONSTRAINT streams_pkey PRIMARY KEY (stream_id),
  CONSTRAINT streams_stream_name_key UNIQUE (stream_name),
  CONSTRAINT streams_stream_name_length CHECK (octet_length(stream_name) BETWEEN 1 AND 512),
  CONSTRAINT streams_category_rule CHECK (category = split_part(stream_name, '-', 1))
);

CREATE TABLE "${flyway:defaultSchema}".events (
  global_position bigint GENERATED ALWAYS AS IDENTITY,
  tx_id           xid8 NOT NULL DEFAULT pg_current_xact_id(),
  event_id        uuid NOT NULL,
  stream_id       bigint NOT NULL,
  stream_version  bigint NOT NULL,
  category        text NOT NULL,
  event_type      text NOT NULL,
  data            jsonb NOT NULL,
  metadata        jsonb,
  causation_id    uuid,
  correlation_id  uuid,
  created_at      timestamptz NOT NULL,
  CONSTRAINT events_order_key UNIQUE (tx_id, global_position),
  CONSTRAINT events_event_id_key UNIQUE (event_id),
  -- No foreign key to streams: append_events is the only writer and creates the stream first;
  -- a key check per event would cost a row lock on the stream.
  CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version)
);

CREATE INDEX streams_category_idx ON "${flyway:defaultSchema}".streams (category);

CREATE INDEX events_category_order_idx ON "${flyway:defaultSchema}".events (category, tx_id, global_position);

-- Waymark's clock for every decision in time (sleeps coming due, timeouts, deadlines, lease expiry
-- and renewal, retry times, the times shown of workflows and dead letters): the database's now(),
-- shifted by the session setting waymark.clock_offset (an interval; unset or empty means none).
-- The setting is a test-only knob: a session that sets it sees Waymark's time moved by that much.
CREATE FUNCTION "${flyway:defaultSchema}".waymark_now() RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT now() + coalesce(nullif(current_setting('waymark.clock_offset', true), '')::interval, interval '0')
$$;

-- The same shift over clock_timestamp(), for checks that must see the time at the moment they run
-- (a fence re-checked after waiting for a row lock), not at the start of the transaction.
CREATE FUNCTION "${flyway:defaultSchema}".waymark_clock_timestamp() RETURNS timestamptz
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT clock_timestamp()
         + coalesce(nullif(current_setting('waymark.clock_offset', true), '')::interval, interval '0')
$$;

-- Stable 32-bit FNV-1a hash over the UTF-8 bytes of a stream name, as a signed int.
-- dev.waymark.store.StreamNames#hash computes the same value in Java (test vectors in both).
CREATE FUNCTION "${flyway:defaultSchema}".stream_hash(p_name text) RETURNS integer
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  b bytea := convert_to(p_name, 'UTF8');
  h bigint := 2166136261;
BEGIN
  FOR i IN 0 .. length(b) - 1 LOOP
    h := ((h # get_byte(b, i)) * 16777619) & 4294967295;
  END LOOP;
  IF h >= 2147483648 THEN
    h := h - 4294967296;
  END IF;
  RETURN h::integer;
END
$$;

-- Append one or more streams atomically. Streams are given in p_streams with their expected
-- versions (-1 any, -2 no stream, -3 stream exists, n >= 0 exactly n) and event counts; the
-- event arrays hold every stream's events back to back, in input order.
-- Returns a flat array: the transaction id, then per stream (stream_id, new version, first
-- position, last position). A flat array is markedly cheaper per call than a set-returning function.
--
-- Ordering argument: see lock_streams below. Every stream key is locked (advisory, transaction
-- scoped, in ascending key order so concurrent multi-stream appends cannot deadlock) BEFORE the
-- first write, and the locks taken while the transaction had no xid are recorded for later appends
-- of the same transaction. A transaction that already has its xid (WM001) may append only to
-- streams it locked before it got it. The settings keep the plan on the stream's indexes.
CREATE FUNCTION "${flyway:defaultSchema}".append_events(
  p_streams text[], p_expected bigint[], p_counts integer[],
  p_event_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[],
  p_causation uuid[], p_correlation uuid[], p_created_at timestamptz)
RETURNS bigint[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
  v_xid xid8 := pg_current_xact_id_if_assigned();
  v_key bigint;
  v_held text;
  v_offset integer := 0;
  v_stream text;
  v_expected bigint;
  v_n integer;
  v_id bigint;
  v_version bigint;
  v_deleted timestamptz;
  v_first bigint;
  v_last bigint;
  v_out bigint[];
BEGIN
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM002',
      MESSAGE = format('append refused: isolation level is %s', current_setting('transaction_isolation')),
      HINT = 'run appends at READ COMMITTED';
  END IF;

  v_held := coalesce(nullif(current_setting('waymark.stream_locks', true), ''), ',');
  IF v_xid IS NOT NULL THEN
    -- The transaction has its xid already: only locks taken before it count (see the header).
    FOR i IN 1 .. array_length(p_streams, 1) LOOP
      IF strpos(v_held, ',' || hashtextextended('${flyway:defaultSchema}/' || p_streams[i], 0) || ',') = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'WM001',
          MESSAGE = format('append refused: the transaction already has transaction id %s and did not lock'
                           ' stream %L before it got it', v_xid, p_streams[i]),
          DETAIL = json_build_object('index', i - 1, 'xid', v_xid::text)::text,
          HINT = 'append before any statement that gives the transaction an id, or lock the streams first (lock_streams)';
      END IF;
    END LOOP;
  ELSIF array_length(p_streams, 1) = 1 THEN
    v_key := hashtextextended('${flyway:defaultSchema}/' || p_streams[1], 0);
    PERFORM pg_advisory_xact_lock(v_key);
    IF strpos(v_held, ',' || v_key || ',') = 0 THEN
      PERFORM set_config('waymark.stream_locks', v_held || v_key || ',', true);
    END IF;
  ELSE
    FOR v_key IN
      SELECT DISTINCT hashtextextended('${flyway:defaultSchema}/' || s, 0) FROM unnest(p_streams) AS s ORDER BY 1
    LOOP
      PERFORM pg_advisory_xact_lock(v_key);
      IF strpos(v_held, ',' || v_key || ',') = 0 THEN
        v_held := v_held || v_key || ',';
      END IF;
    END LOOP;
    PERFORM set_config('waymark.stream_locks', v_held, true);
  END IF;

  v_out := ARRAY[]::bigint[];

  FOR i IN 1 .. array_length(p_streams, 1) LOOP
    v_stream := p_streams[i];
    v_expected := p_expected[i];
    v_n := p_counts[i];

    SELECT s.stream_id, s.deleted_at,
           COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                      WHERE e.stream_id = s.stream_id ORDER BY e.stream_version DESC LIMIT 1), 0)
      INTO v_id, v_deleted, v_version
      FROM "${flyway:defaultSchema}".streams s WHERE s.stream_name = v_stream;

    IF NOT FOUND THEN
      IF v_expected = -3 THEN
        RAISE EXCEPTION USING ERRCODE = 'WM011', MESSAGE = 'stream not found',
          DETAIL = json_build_object('index', i - 1, 'actual', -1, 'deleted', false)::text;
      ELSIF v_expected >= 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'WM010', MESSAGE = 'wrong expected version',
          DETAIL = json_build_object('index', i - 1, 'actual', -1, 'deleted', false)::text;
      END IF;
      INSERT INTO "${flyway:defaultSchema}".streams (stream_name, category, stream_hash)
        VALUES (v_stream, split_part(v_stream, '-', 1), "${flyway:defaultSchema}".stream_hash(v_stream))
        RETURNING stream_id INTO v_id;
      v_version := 0;
    ELSE
      IF v_expected = -2 THEN
        RAISE EXCEPTION USING ERRCODE = 'WM012', MESSAGE = 'stream already exists',
          DETAIL = json_build_object('index', i - 1, 'actual', v_version, 'deleted', v_deleted IS NOT NULL)::text;
      ELSIF v_deleted IS NOT NULL AND v_expected IN (-1, -3) THEN
        RAISE EXCEPTION USING ERRCODE = 'WM011', MESSAGE = 'stream is deleted',
          DETAIL = json_build_object('index', i - 1, 'actual', v_version, 'deleted', true)::text;
      ELSIF v_expected >= 0 AND (v_deleted IS NOT NULL OR v_expected <> v_version) THEN
        RAISE EXCEPTION USING ERRCODE = 'WM010', MESSAGE = 'wrong expected version',
          DETAIL = json_build_object('index', i - 1, 'actual', v_version, 'deleted', v_deleted IS NOT NULL)::text;
      END IF;
    END IF;

    IF v_n = 1 THEN
      INSERT INTO "${flyway:defaultSchema}".events
        (event_id, stream_id, stream_version, category, event_type, data, metadata,
         causation_id, correlation_id, created_at)
      VALUES (p_event_ids[v_offset + 1], v_id, v_version + 1, split_part(v_stream, '-', 1),
              p_types[v_offset + 1], p_data[v_offset + 1], p_metadata[v_offset + 1],
              p_causation[v_offset + 1], p_correlation[v_offset + 1], p_created_at)
      RETURNING global_position INTO v_first;
      v_last := v_first;
    ELSE
      WITH inserted AS (
        INSERT INTO "${flyway:defaultSchema}".events
          (event_id, stream_id, stream_version, category, event_type, data, metadata,
           causation_id, correlation_id, created_at)
        SELECT p_event_ids[j], v_id, v_version + (j - v_offset), split_part(v_stream, '-', 1),
               p_types[j], p_data[j], p_metadata[j], p_causation[j], p_correlation[j], p_created_at
          FROM generate_series(v_offset + 1, v_offset + v_n) AS j
         ORDER BY j
        RETURNING global_position
      )
      SELECT min(global_position), max(global_position) INTO v_first, v_last FROM inserted;
    END IF;

    v_out := v_out || ARRAY[v_id, v_version + v_n, v_first, v_last];
    v_offset := v_offset + v_n;
  END LOOP;
  RETURN ARRAY[pg_current_xact_id()::text::bigint] || v_out;
END
$$;

-- Soft delete (p_deleted = true) or undelete a stream under the same stream lock appends take.
-- Returns the stream id when the state changed, NULL when the stream is missing or already so.
CREATE FUNCTION "${flyway:defaultSchema}".set_stream_deleted(p_stream text, p_deleted boolean)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}/' || p_stream, 0));
  UPDATE "${flyway:defaultSchema}".streams
     SET deleted_at = CASE WHEN p_deleted THEN now() ELSE NULL END
   WHERE stream_name = p_stream AND (deleted_at IS NULL) = p_deleted
  RETURNING stream_id INTO v_id;
  RETURN v_id;
END
$$;

-- The store's reads (and, in waymark-workflow, a journal read and a resume pass's discovery and
-- counts) are functions whose plans walk the index that serves each read, however large the tables
-- were when a plan was made and whatever their statistics say now; the append and journal paths
-- plan the same way. As plain statements prepared by the driver they did not: pgjdbc prepares a
-- statement on the server at its fifth execution and the server plans it generically from the
-- sixth, keeping that plan until the next ANALYZE of a table it reads (autovacuum runs that only
-- after a table grew by a tenth, at most once a minute). Planned on small
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
-- (an equality would let a plan walk the global order and filter).

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
SET jit = off
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
SET jit = off
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
SET jit = off
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
SET jit = off
AS $$
BEGIN
  RETURN (SELECT count(*) FROM "${flyway:defaultSchema}".events e
           WHERE e.tx_id >= pg_snapshot_xmin(pg_current_snapshot()));
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
SET jit = off
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
SET jit = off
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

-- A cheap probe for committed events still behind the visibility horizon.
--
-- A reader woken by an append may find nothing new: the event is committed but hidden, because a
-- transaction with a smaller id (any writer in the cluster: a checkpoint, a lease renewal, the
-- application's own) is still open. That transaction's end signals nobody, so the reader would
-- sleep until its next poll (a second by default). Readers ask, after a short page, whether any
-- committed event is hidden, and if so read again within milliseconds instead.
-- EXISTS stops at the first row of the (tx_id, global_position) index above the horizon; the
-- function plans like the reads above (the index walk whatever the table's size when planned).
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

-- Appends inside a transaction that already has its transaction id, when the transaction locked
-- the appended streams before it got that id (issue 29, item 2).
--
-- append_events must take its stream locks before the transaction has an xid. A transaction gets
-- its xid at its first write, but also at SELECT ... FOR UPDATE/SHARE, at CREATE TEMP TABLE, and
-- at nextval() when the sequence logs ahead (about one call in 32): appends after those would be
-- refused, some of them at random. So a transaction may take the stream locks first (lock_streams, as its first
-- statement; EventStore.inTransaction does so when it runs a refused work again), and append to
-- those streams after any other statement.
--
-- Ordering argument (DESIGN decision 1: each stream's version order must agree with the global
-- order (tx_id, global_position)). What the argument needs is not "no xid when append_events runs"
-- but: every transaction that writes events of stream S received its xid while it held S's lock.
-- Take two such transactions A and B writing S, A first (A holds S's lock first). B gets the lock
-- only after A committed or rolled back, and gets its xid only while holding the lock, so after A
-- ended. Xids are handed out in increasing order and A had its xid before it ended, so
-- xid(A) < xid(B): B's versions, which come after A's, also come after them in the global order.
-- Within one transaction the versions of S are written in increasing global_position (one
-- sequence, one session), so the order holds there too. Readers only return events below
-- pg_snapshot_xmin, so neither A nor B is visible out of order or skipped.
--
-- The rule therefore is: a stream lock counts for an append only if it was taken while the
-- transaction had no xid. Both places that take stream locks record the keys they took without an
-- xid in the transaction-local setting waymark.stream_locks (',key,key,...,'): lock_streams, which
-- refuses to run once there is an xid, and append_events, which locks before its first write. When
-- append_events finds an xid, it accepts the append only if every key of the append is recorded
-- there, and refuses it (WM001) otherwise. The setting and the locks share their life: both end
-- with the transaction, and both are undone by ROLLBACK TO SAVEPOINT of the subtransaction that
-- took them. (A session could forge the setting with SET LOCAL: that is deliberate misuse of an
-- internal name, as calling pg_advisory_xact_unlock would be.)
--
-- The keys are the ones append_events locks: hashtextextended('<schema>/' || stream, 0).
-- The locks of several streams are taken in ascending key order, so that two
-- multi-stream appends cannot deadlock on each other's stream locks.
CREATE FUNCTION "${flyway:defaultSchema}".lock_streams(p_streams text[])
RETURNS void
LANGUAGE plpgsql
SET jit = off
AS $$
DECLARE
  v_key bigint;
  v_held text := coalesce(nullif(current_setting('waymark.stream_locks', true), ''), ',');
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = format('stream locks refused: the transaction already has transaction id %s',
                       pg_current_xact_id_if_assigned()),
      HINT = 'lock the streams as the first statement of the transaction';
  END IF;
  FOR v_key IN
    SELECT DISTINCT hashtextextended('${flyway:defaultSchema}/' || s, 0) FROM unnest(p_streams) AS s ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(v_key);
    IF strpos(v_held, ',' || v_key || ',') = 0 THEN
      v_held := v_held || v_key || ',';
    END IF;
  END LOOP;
  PERFORM set_config('waymark.stream_locks', v_held, true);
END
$$;

-- Group commit of concurrent appends (issue 31): append_batch writes many independent appends
-- (single or multi-stream, of different callers) in one statement of one transaction, and returns
-- an outcome per append instead of raising, so one caller's conflict never aborts its neighbours.
--
-- Input (the Java side, AppendBatchSql, builds it):
--   p_names        the distinct stream names of the batch
--   p_item_slots   per append ("item"), in call order: how many streams ("slots") it writes
--   p_slot_name    per slot, in item order: the index of its stream in p_names (1-based)
--   p_expected     per slot: the expected version (-1 any, -2 no stream, -3 stream exists, n >= 0 exactly n)
--   p_counts       per slot: its number of events
--   p_created      per slot: the created_at of its events
--   p_event_slot   per event: the index of its slot (1-based)
--   p_event_ids .. p_correlation: every slot's events back to back, in slot order
--   p_check_ids    the event ids the callers chose themselves, or NULL for none: only those can
--                  already be stored (a resend); ids the store generated are new
-- Output: a flat bigint array (markedly cheaper per call than a set-returning function): the
-- transaction id (0 when nothing was written), then per item its status and three values per slot:
--   status 0 ok:             per slot (version after the append, first position, last position)
--   status 1 wrong version,  2 stream not found (or deleted), 3 stream already exists: the first
--                            slot holds (index of the failing stream in the append, actual version
--                            or -1, 1 when deleted else 0), the other slots 0
--   status 4 lock busy, 5 an event id is already stored: nothing written; the caller appends alone
-- Status 1 to 3 are exactly the conflicts append_events raises as WM010, WM011 and WM012.
--
-- Ordering argument (DESIGN decision 1, the rule stated at lock_streams): every transaction that writes events of
-- stream S must receive its transaction id while it holds S's lock. append_batch takes the lock of
-- every stream of the batch before its first write, so the batch gets its xid only after all of
-- them are held; an append whose lock it could not take writes nothing. Within the batch the events
-- are inserted in call order, by one statement, so two appends to one stream get consecutive
-- versions in call order and increasing positions: per-stream order agrees with the global order.
-- Readers only return events below pg_snapshot_xmin, as for any other append.
--
-- The batch only try-locks (pg_try_advisory_xact_lock), and never waits for a stream lock while
-- holding another: a batch holds many streams' locks, so waiting could close a deadlock cycle with
-- an application transaction that appends to two streams one after the other, which a single
-- append never could. An append whose stream is busy (another handle, an inTransaction caller)
-- gets status 4 and the caller appends alone, waiting for the lock as always. (A try-lock never
-- waits, so the order in which they are taken does not matter.)
--
-- Versions are read once, for all streams, by a statement after the one that took the locks (at
-- READ COMMITTED each statement reads with a snapshot taken when it starts, so the read sees every
-- append that held a lock before), and carried forward in memory from append to append of the
-- batch. Ids the callers chose are looked up once before any insert (a concurrent transaction
-- inserting the same id, or a generated id that collides, still fails the whole statement: the
-- store then runs every append of the batch alone).
--
-- The cost is per statement, not per event: a statement takes the locks, one reads the streams,
-- one inserts every accepted event from the arrays (unnest, in call order); the checks walk the
-- items in memory. The statements keep their generic plans (plan_cache_mode): planned afresh for
-- each call, as PL/pgSQL does while a custom plan looks cheaper, the join of the stream reads alone
-- cost more server time than the batch's inserts (a batch of one append took 0.67 ms against
-- 0.13 ms for append_events in one pgbench session; with generic plans about half as much).
CREATE FUNCTION "${flyway:defaultSchema}".append_batch(
  p_names text[], p_item_slots integer[], p_slot_name integer[], p_expected bigint[], p_counts integer[],
  p_created timestamptz[], p_event_slot integer[], p_event_ids uuid[], p_types text[], p_data jsonb[],
  p_metadata jsonb[], p_causation uuid[], p_correlation uuid[], p_check_ids uuid[])
RETURNS bigint[]
LANGUAGE plpgsql
SET enable_seqscan = off
SET plan_cache_mode = force_generic_plan
SET jit = off
AS $$
DECLARE
  v_slots integer := cardinality(p_slot_name);
  v_locked boolean[];
  v_id bigint[];
  v_version bigint[];
  v_deleted boolean[];
  v_dups uuid[];
  v_slot_ok boolean[] := array_fill(false, ARRAY[v_slots]);
  v_slot_id bigint[] := array_fill(NULL::bigint, ARRAY[v_slots]);
  v_slot_base bigint[] := array_fill(0::bigint, ARRAY[v_slots]);
  v_slot_first integer[] := array_fill(0, ARRAY[v_slots]);
  v_positions bigint[];
  v_out bigint[] := array_fill(0::bigint, ARRAY[1 + cardinality(p_item_slots) + 3 * v_slots]);
  v_new_id bigint;
  v_status integer;
  v_k integer;
  v_expected bigint;
  v_slot integer := 0;
  v_event integer := 0;
  v_first_slot integer;
  v_first_event integer;
  v_at integer := 2;
  v_failed integer;
  v_pos integer := 1;
BEGIN
  IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'WM001',
      MESSAGE = format('append batch refused: the transaction already has transaction id %s',
                       pg_current_xact_id_if_assigned()),
      HINT = 'append_batch runs as the first statement of a transaction of its own';
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    RAISE EXCEPTION USING ERRCODE = 'WM002',
      MESSAGE = format('append refused: isolation level is %s', current_setting('transaction_isolation')),
      HINT = 'run appends at READ COMMITTED';
  END IF;

  -- The locks, none waited for (see the header), in a statement before the one that reads.
  v_locked := ARRAY(SELECT pg_try_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}/' || n.name, 0))
                      FROM unnest(p_names) WITH ORDINALITY AS n(name, ord) ORDER BY n.ord);

  SELECT array_agg(s.stream_id ORDER BY n.ord), array_agg(v.version ORDER BY n.ord),
         array_agg(s.deleted_at IS NOT NULL ORDER BY n.ord)
    INTO v_id, v_version, v_deleted
    FROM unnest(p_names) WITH ORDINALITY AS n(name, ord)
    LEFT JOIN "${flyway:defaultSchema}".streams s ON s.stream_name = n.name
    LEFT JOIN LATERAL (SELECT COALESCE((SELECT e.stream_version FROM "${flyway:defaultSchema}".events e
                                         WHERE e.stream_id = s.stream_id
                                         ORDER BY e.stream_version DESC LIMIT 1), 0) AS version) v ON true;

  IF p_check_ids IS NOT NULL THEN
    SELECT coalesce(array_agg(e.event_id), ARRAY[]::uuid[]) INTO v_dups
      FROM "${flyway:defaultSchema}".events e WHERE e.event_id = ANY (p_check_ids);
  END IF;

  -- The conditions, item by item in call order, as append_events checks them, against the
  -- versions so far in this batch; an accepted item moves its streams' versions on.
  FOR v_item IN 1 .. cardinality(p_item_slots) LOOP
    v_first_slot := v_slot + 1;
    v_first_event := v_event + 1;
    v_slot := v_slot + p_item_slots[v_item];
    v_status := 0;
    v_failed := 0;
    FOR s IN v_first_slot .. v_slot LOOP
      v_slot_first[s] := v_event + 1;
      v_event := v_event + p_counts[s];
      IF NOT v_locked[p_slot_name[s]] THEN
        v_status := 4;
      END IF;
    END LOOP;
    -- v_dups also holds the ids of the items accepted before (a later one must not reuse them)
    IF v_status = 0 AND v_dups IS NOT NULL AND p_event_ids[v_first_event:v_event] && v_dups THEN
      v_status := 5;
    END IF;
    IF v_status = 0 THEN
      FOR s IN v_first_slot .. v_slot LOOP
        v_k := p_slot_name[s];
        v_expected := p_expected[s];
        IF v_id[v_k] IS NULL THEN
          IF v_expected = -3 THEN
            v_status := 2;
          ELSIF v_expected >= 0 THEN
            v_status := 1;
          END IF;
        ELSIF v_expected = -2 THEN
          v_status := 3;
        ELSIF v_deleted[v_k] AND v_expected IN (-1, -3) THEN
          v_status := 2;
        ELSIF v_expected >= 0 AND (v_deleted[v_k] OR v_expected <> v_version[v_k]) THEN
          v_status := 1;
        END IF;
        IF v_status <> 0 THEN
          v_failed := s;
          EXIT;
        END IF;
      END LOOP;
    END IF;
    v_out[v_at] := v_status;
    IF v_failed > 0 THEN
      v_k := p_slot_name[v_failed];
      v_out[v_at + 1] := v_failed - v_first_slot;
      v_out[v_at + 2] := CASE WHEN v_id[v_k] IS NULL THEN -1 ELSE v_version[v_k] END;
      v_out[v_at + 3] := CASE WHEN v_deleted[v_k] THEN 1 ELSE 0 END;
    ELSIF v_status = 0 THEN
      FOR s IN v_first_slot .. v_slot LOOP
        v_k := p_slot_name[s];
        IF v_id[v_k] IS NULL THEN
          INSERT INTO "${flyway:defaultSchema}".streams (stream_name, category, stream_hash)
            VALUES (p_names[v_k], split_part(p_names[v_k], '-', 1),
                    "${flyway:defaultSchema}".stream_hash(p_names[v_k]))
            RETURNING stream_id INTO v_new_id;
          v_id[v_k] := v_new_id;
          v_version[v_k] := 0;
          v_deleted[v_k] := false;
        END IF;
        v_slot_ok[s] := true;
        v_slot_id[s] := v_id[v_k];
        v_slot_base[s] := v_version[v_k];
        v_version[v_k] := v_version[v_k] + p_counts[s];
      END LOOP;
      IF v_dups IS NOT NULL THEN
        v_dups := v_dups || p_event_ids[v_first_event:v_event];
      END IF;
    END IF;
    v_at := v_at + 1 + 3 * (v_slot - v_first_slot + 1);
  END LOOP;

  -- All events of the accepted appends in one insert, in call order: identity values are drawn in
  -- the order of the sorted rows, so positions increase with the event's place in the batch.
  WITH inserted AS (
    INSERT INTO "${flyway:defaultSchema}".events
      (event_id, stream_id, stream_version, category, event_type, data, metadata,
       causation_id, correlation_id, created_at)
    SELECT e.id, v_slot_id[e.s], v_slot_base[e.s] + (e.j - v_slot_first[e.s]) + 1,
           split_part(p_names[p_slot_name[e.s]], '-', 1), e.type, e.data, e.meta, e.caus, e.corr,
           p_created[e.s]
      FROM unnest(p_event_ids, p_event_slot, p_types, p_data, p_metadata, p_causation, p_correlation)
           WITH ORDINALITY AS e(id, s, type, data, meta, caus, corr, j)
     WHERE v_slot_ok[e.s]
     ORDER BY e.j
    RETURNING global_position
  )
  SELECT array_agg(global_position ORDER BY global_position) INTO v_positions FROM inserted;

  -- Fill in (version, first, last) of the accepted slots, walking the positions in slot order.
  v_slot := 0;
  v_at := 2;
  FOR v_item IN 1 .. cardinality(p_item_slots) LOOP
    v_status := v_out[v_at];
    v_at := v_at + 1;
    FOR s IN v_slot + 1 .. v_slot + p_item_slots[v_item] LOOP
      IF v_status = 0 THEN
        v_out[v_at] := v_slot_base[s] + p_counts[s];
        v_out[v_at + 1] := v_positions[v_pos];
        v_out[v_at + 2] := v_positions[v_pos + p_counts[s] - 1];
        v_pos := v_pos + p_counts[s];
      END IF;
      v_at := v_at + 3;
    END LOOP;
    v_slot := v_slot + p_item_slots[v_item];
  END LOOP;
  v_out[1] := coalesce(pg_current_xact_id_if_assigned()::text::bigint, 0);
  RETURN v_out;
END
$$;
