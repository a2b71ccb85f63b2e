package dev.waymark.kafka;

/**
 * Something the Kafka source did, for metrics, logs and tests.
 *
 * @param kind what happened
 * @param source the source's name
 * @param topic the topic, or null for events about no partition
 * @param partition the partition, or -1
 * @param value the offset committed, sought, halted at, dead-lettered (or not: a failed dead letter)
 *     or found after a retention gap;
 *     the lag for {@link Kind#LAG}; the partition's assignment generation for {@link Kind#ASSIGNED};
 *     the offset retried for {@link Kind#RETRY_HELD}, sought back to for {@link Kind#SEEK_FALLBACK};
 *     the records held for {@link Kind#HELD}; else -1
 * @param detail a short text (a reason, an error), or null
 */
public record KafkaSourceEvent(Kind kind, String source, String topic, int partition, long value, String detail) {

    /** Kinds of events. */
    public enum Kind {
        /** A partition was assigned to this consumer (a rebalance). */
        ASSIGNED,
        /** A partition was revoked after its acknowledged offsets were committed. */
        REVOKED,
        /** A partition was lost (no commit was possible). */
        LOST,
        /** An offset was committed ({@code value} is the next offset to read). */
        COMMITTED,
        /** A commit attempt failed; it is retried within the budget. */
        COMMIT_FAILED,
        /**
         * The partition was sought back ({@code value} is the target offset): past the retry hold
         * budget, or a halt resumed.
         */
        SEEK,
        /** The partition was paused (a halt, a retry delay, or a full buffer). */
        PAUSED,
        /** The partition was resumed. */
        RESUMED,
        /** A halt stopped the partition at {@code value}. */
        HALTED,
        /** A record was published to a dead-letter topic (or logged and committed without one). */
        DEAD_LETTERED,
        /**
         * Publishing a record to its dead-letter topic failed ({@code value} is its offset,
         * {@code detail} the dead-letter topic and the error); nothing was committed past it, and the
         * acknowledgement threw a {@link DeadLetterTopicException}. Once per failed attempt.
         */
        DEAD_LETTER_FAILED,
        /** A retried offset no longer existed (retention, compaction); consumption went on from {@code value}. */
        RETENTION_GAP,
        /** Records in the partition after the committed offset ({@code value}), reported every commit interval. */
        LAG,
        /** The source ended with a {@link KafkaSourceException}. */
        FATAL,
        /**
         * A retried record ({@code value} is its offset) is held in memory behind its retry barrier,
         * with the records its processor orders after it, for redelivery after the delay: no seek.
         */
        RETRY_HELD,
        /**
         * Holding would have passed {@link KafkaSourceConfig.Polling#retryHoldBytes()}: the partition
         * is sought back to {@code value} instead (a {@link #SEEK} follows) and paused until it holds
         * nothing.
         */
        SEEK_FALLBACK,
        /**
         * Records held behind retry barriers in all partitions of the source now ({@code value};
         * no topic), reported every commit interval.
         */
        HELD
    }
}
