package dev.waymark.messaging;

import dev.waymark.store.DeadLetterReason;
import java.time.Duration;

/** What a handler decided about a message; the runtime hands it to the adapter's {@link AckHandle}. */
public sealed interface AckDecision {

    /** Done. */
    static AckDecision ok() {
        return Ok.INSTANCE;
    }

    /** Redeliver after at least {@code delay}. */
    static AckDecision retry(Duration delay) {
        return new Retry(delay);
    }

    /** Permanently unprocessable: dead-letter it. */
    static AckDecision deadLetter(DeadLetterReason reason) {
        return new DeadLetter(reason);
    }

    /** Stop this processor: no new messages; in-flight ones finish; this one is not acknowledged. */
    static AckDecision halt(String reason) {
        return new Halt(reason);
    }

    /** Done. */
    enum Ok implements AckDecision {
        /** The only instance. */
        INSTANCE
    }

    /** @param delay at least this long before redelivery, {@code >= 0} */
    record Retry(Duration delay) implements AckDecision {
        /** Validates. */
        public Retry {
            if (delay == null || delay.isNegative()) {
                throw new IllegalArgumentException("retry delay must be >= 0, got " + delay);
            }
        }
    }

    /** @param reason why */
    record DeadLetter(DeadLetterReason reason) implements AckDecision {
        /** Validates. */
        public DeadLetter {
            if (reason == null) {
                throw new IllegalArgumentException("dead-letter reason must not be null");
            }
        }
    }

    /** @param reason why the processor stops */
    record Halt(String reason) implements AckDecision {
        /** Validates. */
        public Halt {
            if (reason == null || reason.isBlank()) {
                throw new IllegalArgumentException("halt reason must not be blank");
            }
        }
    }
}
