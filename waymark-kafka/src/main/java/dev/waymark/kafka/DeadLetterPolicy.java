package dev.waymark.kafka;

import dev.waymark.messaging.MessagingConfigException;
import java.util.function.UnaryOperator;

/**
 * What {@link dev.waymark.messaging.AckDecision#deadLetter} does with a record. Publishing policies
 * send the record (original key and value byte for byte, nulls kept, and headers, plus
 * {@link DeadLetterHeaders}) to a topic and wait for the broker's acknowledgement before the offset
 * may be committed past it; if publishing fails, nothing is committed and the acknowledgement
 * throws a {@link DeadLetterTopicException}, so the processor retries it and finally fails. The
 * dead-letter topics are checked when the source starts (with a {@code topicPattern}, when each
 * topic is first assigned): a missing one fails the source, or is created, as
 * {@link KafkaSourceConfigBuilder#missingDeadLetterTopic} says. A dead-letter topic must not be one
 * the source reads: the builder refuses one among its {@code topics}, and one its
 * {@code topicPattern} matches fails the source when its topic is assigned.
 */
public sealed interface DeadLetterPolicy {

    /** Every record to one topic. */
    static DeadLetterPolicy topic(String topic) {
        return new Named(source -> topic);
    }

    /** Each record to {@code originalTopic + suffix}, such as {@code orders.DLT}. The default is {@code .DLT}. */
    static DeadLetterPolicy topicSuffix(String suffix) {
        if (suffix == null || suffix.isEmpty()) {
            throw new MessagingConfigException("dead-letter topic suffix must not be empty");
        }
        return new Named(source -> source + suffix);
    }

    /** Each record to the topic {@code naming} returns for its original topic. */
    static DeadLetterPolicy topicPerSource(UnaryOperator<String> naming) {
        return new Named(naming);
    }

    /**
     * No dead-letter topic: the offset is committed past the record after one WARN log line with
     * topic, partition, offset and reason. The record is then only in the log and in traces;
     * choose this only where losing it is acceptable.
     */
    static DeadLetterPolicy logAndCommit() {
        return LogAndCommit.INSTANCE;
    }

    /** @param naming original topic to dead-letter topic; must not return null or blank */
    record Named(UnaryOperator<String> naming) implements DeadLetterPolicy {
        /** Validates. */
        public Named {
            if (naming == null) {
                throw new MessagingConfigException("dead-letter topic naming must not be null");
            }
        }

        /** The dead-letter topic of {@code topic}. */
        public String topicFor(String topic) {
            String name = naming.apply(topic);
            if (name == null || name.isBlank()) {
                throw new IllegalStateException("dead-letter naming returned no topic for " + topic);
            }
            return name;
        }
    }

    /** Log and commit. */
    enum LogAndCommit implements DeadLetterPolicy {
        /** The only instance. */
        INSTANCE
    }
}
