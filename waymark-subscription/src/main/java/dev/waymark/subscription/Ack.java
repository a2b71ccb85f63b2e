package dev.waymark.subscription;

import dev.waymark.store.DeadLetterReason;
import java.time.Duration;

/** A handler's decision about one delivery. */
public sealed interface Ack {

    /** Handled: the subscription moves past the event. */
    static Ack ok() {
        return Ok.INSTANCE;
    }

    /**
     * Deliver the same event again after {@code delay}, until the retry budget is spent; then the
     * event is dead-lettered with {@link DeadLetterReason.MaxAttempts}.
     */
    static Ack retry(Duration delay) {
        return new Retry(delay);
    }

    /** Give up on the event: record a dead letter and move past it, in one statement. */
    static Ack deadLetter(DeadLetterReason reason) {
        return new DeadLetter(reason, null);
    }

    /**
     * Give up on the event because of {@code cause}: as {@link #deadLetter(DeadLetterReason)}, and the
     * dead letter keeps the exception's class and message ({@link dev.waymark.subscription.DeadLetter#error()}).
     */
    static Ack deadLetter(DeadLetterReason reason, Throwable cause) {
        return new DeadLetter(reason, cause);
    }

    /** Handled. */
    enum Ok implements Ack {
        /** The only instance. */
        INSTANCE
    }

    /**
     * Retry after a delay.
     *
     * @param delay the delay, {@code >= 0}
     */
    record Retry(Duration delay) implements Ack {
        /** Validates the delay. */
        public Retry {
            if (delay == null || delay.isNegative()) {
                throw new SubscriptionConfigException("retry delay must be >= 0, got " + delay);
            }
        }
    }

    /**
     * Dead-letter the event.
     *
     * @param reason why
     * @param cause the exception behind it, kept with the dead letter, or null
     */
    record DeadLetter(DeadLetterReason reason, Throwable cause) implements Ack {
        /** Validates the reason. */
        public DeadLetter {
            if (reason == null) {
                throw new SubscriptionConfigException("dead-letter reason must not be null");
            }
        }

        /** Dead-letter the event without a cause. */
        public DeadLetter(DeadLetterReason reason) {
            this(reason, null);
        }
    }
}
