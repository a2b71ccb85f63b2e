-- Waymark subscriptions schema (baseline of waymark-subscription): checkpoints, dead letters,
-- and the lease rows of sharded pools. Applied after waymark-store's baseline.


-- One checkpoint per (subscription, member): the last position handled. Writes never move it
-- backwards (see CheckpointStore); only an explicit operator reset may.
CREATE TABLE "${flyway:defaultSchema}".checkpoints (
  subscription text NOT NULL,
  member       integer NOT NULL,
  group_size   integer NOT NULL,
  position_tx  bigint NOT NULL,
  position_seq bigint NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT checkpoints_pkey PRIMARY KEY (subscription, member),
  CONSTRAINT checkpoints_member_range CHECK (member >= 0 AND member < group_size)
);

-- A dead letter: an event a subscription member gave up on, with the reason and the handler's
-- exception, until it is replayed (replayed_at, replay_outcome) or purged.
CREATE TABLE "${flyway:defaultSchema}".dead_letters (
  dead_letter_id bigint GENERATED ALWAYS AS IDENTITY,
  subscription   text NOT NULL,
  member         integer NOT NULL,
  event_id       uuid NOT NULL,
  stream_name    text NOT NULL,
  stream_version bigint NOT NULL,
  position_tx    bigint NOT NULL,
  position_seq   bigint NOT NULL,
  event_type     text NOT NULL,
  reason_kind    text NOT NULL,
  reason_summary text NOT NULL,
  reason         jsonb NOT NULL,
  attempts       integer NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT "${flyway:defaultSchema}".waymark_now(),
  replayed_at    timestamptz,
  replay_outcome text,
  -- The class name and message of the exception that led to the dead letter (the handler's last
  -- one when the retries ran out, or the cause given with an explicit dead-letter acknowledgement);
  -- both null when there was none. The library bounds them (class 500, message 2,000 characters,
  -- cut between code points) and replaces a NUL; the columns themselves take any text.
  error_class    text,
  error_message  text,
  CONSTRAINT dead_letters_pkey PRIMARY KEY (dead_letter_id),
  CONSTRAINT dead_letters_event_key UNIQUE (subscription, member, event_id)
);

-- Lease rows of sharded subscription pools: one per bucket. epoch grows on every change of owner;
-- checkpoint writes of a bucket are conditioned on (owner, epoch) and an unexpired lease, all
-- judged by the database clock.
CREATE TABLE "${flyway:defaultSchema}".shards (
  subscription     text NOT NULL,
  bucket           integer NOT NULL,
  shard_count      integer NOT NULL,
  owner            text,
  epoch            bigint NOT NULL DEFAULT 0,
  lease_expires_at timestamptz,
  heartbeat_at     timestamptz,
  CONSTRAINT shards_pkey PRIMARY KEY (subscription, bucket),
  CONSTRAINT shards_bucket_range CHECK (bucket >= 0 AND bucket < shard_count)
);

CREATE TABLE "${flyway:defaultSchema}".workers (
  subscription text NOT NULL,
  worker_id    text NOT NULL,
  heartbeat_at timestamptz NOT NULL,
  CONSTRAINT workers_pkey PRIMARY KEY (subscription, worker_id)
);

CREATE INDEX dead_letters_newest_idx
  ON "${flyway:defaultSchema}".dead_letters (subscription, member, dead_letter_id DESC);
