package dev.waymark.subscription;

import java.time.Duration;

/**
 * How often an event is delivered before it is dead-lettered, and how long to wait after a
 * handler throws.
 *
 * @param maxAttempts total deliveries of one event, counting the first, {@code >= 1}
 * @param errorDelay the delay before redelivering after the handler threw, {@code >= 0}
 */
public record RetryPolicy(int maxAttempts, Duration errorDelay) {

    /** Default: 5 deliveries. */
    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    /** Default: 1 s after a handler exception. */
    public static final Duration DEFAULT_ERROR_DELAY = Duration.ofSeconds(1);

    /** Validates the policy. */
    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new SubscriptionConfigException("retry maxAttempts must be >= 1, got " + maxAttempts);
        }
        if (errorDelay == null || errorDelay.isNegative()) {
            throw new SubscriptionConfigException("retry errorDelay must be >= 0, got " + errorDelay);
        }
    }

    /** The defaults. */
    public static RetryPolicy defaults() {
        return new RetryPolicy(DEFAULT_MAX_ATTEMPTS, DEFAULT_ERROR_DELAY);
    }
}
