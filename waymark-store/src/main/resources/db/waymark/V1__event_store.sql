-- Waymark event store, version 1.
-- Every object is schema-qualified: this script must work whatever the session's search_path is.
-- Global order is (tx_id, global_position): see DESIGN.md decision 1 and EventStore's javadoc.

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

CREATE INDEX streams_category_idx ON "${flyway:defaultSchema}".streams (category);

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

CREATE INDEX events_category_order_idx ON "${flyway:defaultSchema}".events (category, tx_id, global_position);

-- Append one or more streams atomically. Streams are given in p_streams with their expected
-- versions (-1 any, -2 no stream, -3 stream exists, n >= 0 exactly n) and event counts; the
-- event arrays hold every stream's events back to back, in input order.
-- Returns a flat array: the transaction id, then per stream (stream_id, new version, first
-- position, last position). A flat array is markedly cheaper per call than a set-returning function.
--
-- Ordering argument: every stream key is locked (advisory, transaction scoped, in ascending key
-- order so concurrent multi-stream appends cannot deadlock) BEFORE the first write, and the
-- transaction receives its xid only at its first write. A later appender to the same stream
-- therefore waits for the earlier one's commit and then gets a larger xid, so per-stream order
-- agrees with the global order (tx_id, global_position).
CREATE FUNCTION "${flyway:defaultSchema}".append_events(
  p_streams text[], p_expected bigint[], p_counts integer[],
  p_event_ids uuid[], p_types text[], p_data jsonb[], p_metadata jsonb[],
  p_causation uuid[], p_correlation uuid[], p_created_at timestamptz)
RETURNS bigint[]
LANGUAGE plpgsql AS $$
DECLARE
  v_key bigint;
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

  v_out := ARRAY[]::bigint[];

  IF array_length(p_streams, 1) = 1 THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}/' || p_streams[1], 0));
  ELSE
    FOR v_key IN
      SELECT DISTINCT hashtextextended('${flyway:defaultSchema}/' || s, 0) FROM unnest(p_streams) AS s ORDER BY 1
    LOOP
      PERFORM pg_advisory_xact_lock(v_key);
    END LOOP;
  END IF;

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
  -- Only now, after the first write, does the transaction hold an xid to report.
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
