package dev.waymark.core;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * How often and how soon a failed operation is tried again: the one retry shape of every Waymark
 * component (subscription handlers, the sharded pool, message processors, workflow crashes, the
 * resume worker, Kafka broker calls).
 *
 * <p>{@code maxAttempts} counts every attempt, the first included: {@code 1} means no retry,
 * {@link #UNLIMITED} means no limit. The delay before retry {@code n} (1 for the first retry, that is
 * the second attempt) is {@code initialDelay * multiplier^(n-1)}, at most {@code maxDelay}; of that
 * delay {@code d}, jitter takes a random part away so that the pause lies in {@code [d * (1 -
 * jitter), d]} (0: no jitter, 0.5: a random half to all of it, 1: anything up to {@code d}).
 *
 * <pre>{@code
 * RetryPolicy.none();                                                   // one attempt
 * RetryPolicy.fixed(5, Duration.ofSeconds(1));                          // 5 attempts, 1 s apart
 * RetryPolicy.exponential(10, Duration.ofMillis(200), Duration.ofSeconds(30))
 *         .withJitter(0.5);                                             // 200 ms, 400 ms, ... 30 s
 * }</pre>
 *
 * <p>Immutable and validated on construction: an invalid value fails with an {@link
 * IllegalArgumentException} naming the component, the value and the rule.
 *
 * @param maxAttempts attempts in all, the first included; at least 1; {@link #UNLIMITED} for no limit
 * @param initialDelay the delay before the first retry; {@code >= 0}
 * @param multiplier the factor between one delay and the next; finite and {@code >= 1}
 * @param maxDelay the longest delay; {@code >= initialDelay}
 * @param jitter the random fraction of each delay that may be taken away; in {@code [0, 1]}
 */
public record RetryPolicy(int maxAttempts, Duration initialDelay, double multiplier, Duration maxDelay, double jitter) {

    /** {@link #maxAttempts()} meaning "try again for ever". */
    public static final int UNLIMITED = Integer.MAX_VALUE;

    private static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, 1.0, Duration.ZERO, 0.0);

    /**
     * Validates every component.
     *
     * @throws IllegalArgumentException naming the component, the value and the rule
     */
    public RetryPolicy {
        if (maxAttempts < 1) {
            throw invalid("maxAttempts must be >= 1 (1 = no retry), got " + maxAttempts);
        }
        if (initialDelay == null || initialDelay.isNegative()) {
            throw invalid("initialDelay must be >= 0, got " + initialDelay);
        }
        if (!Double.isFinite(multiplier) || multiplier < 1.0) {
            throw invalid("multiplier must be a finite number >= 1, got " + multiplier);
        }
        if (maxDelay == null || maxDelay.compareTo(initialDelay) < 0) {
            throw invalid("maxDelay must be >= initialDelay (" + initialDelay + "), got " + maxDelay);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw invalid("jitter must be between 0 and 1, got " + jitter);
        }
    }

    /** One attempt, no retry. */
    public static RetryPolicy none() {
        return NONE;
    }

    /**
     * Up to {@code maxAttempts} attempts in all, {@code delay} apart, without jitter.
     *
     * @throws IllegalArgumentException if {@code maxAttempts < 1} or {@code delay} is null or negative
     */
    public static RetryPolicy fixed(int maxAttempts, Duration delay) {
        return new RetryPolicy(maxAttempts, delay, 1.0, delay, 0.0);
    }

    /**
     * Up to {@code maxAttempts} attempts in all; the delay starts at {@code initialDelay} and doubles
     * per retry up to {@code maxDelay}; no jitter (add it with {@link #withJitter(double)}).
     *
     * @throws IllegalArgumentException if a value breaks a rule of the record's components
     */
    public static RetryPolicy exponential(int maxAttempts, Duration initialDelay, Duration maxDelay) {
        return new RetryPolicy(maxAttempts, initialDelay, 2.0, maxDelay, 0.0);
    }

    /** This policy with another attempt limit. */
    public RetryPolicy withMaxAttempts(int attempts) {
        return new RetryPolicy(attempts, initialDelay, multiplier, maxDelay, jitter);
    }

    /** This policy with another growth factor. */
    public RetryPolicy withMultiplier(double factor) {
        return new RetryPolicy(maxAttempts, initialDelay, factor, maxDelay, jitter);
    }

    /** This policy with another cap on the delay. */
    public RetryPolicy withMaxDelay(Duration max) {
        return new RetryPolicy(maxAttempts, initialDelay, multiplier, max, jitter);
    }

    /** This policy with another jitter fraction. */
    public RetryPolicy withJitter(double fraction) {
        return new RetryPolicy(maxAttempts, initialDelay, multiplier, maxDelay, fraction);
    }

    /** Whether the policy ever retries ({@code maxAttempts > 1}). */
    public boolean retries() {
        return maxAttempts > 1;
    }

    /** Whether another attempt is allowed after {@code attemptsMade} attempts failed. */
    public boolean allowsAnotherAttempt(int attemptsMade) {
        return attemptsMade < maxAttempts;
    }

    /**
     * The delay before retry {@code retry} (1 for the first retry) without jitter: {@code initialDelay
     * * multiplier^(retry-1)}, at most {@code maxDelay}. Never overflows.
     *
     * @throws IllegalArgumentException if {@code retry < 1}
     */
    public Duration delayBefore(int retry) {
        if (retry < 1) {
            throw invalid("retry must be >= 1 (1 = the first retry), got " + retry);
        }
        long initial = nanos(initialDelay);
        long cap = nanos(maxDelay);
        double grown = initial * Math.pow(multiplier, retry - 1);
        return Duration.ofNanos(grown >= cap ? cap : (long) grown);
    }

    /**
     * The pause before retry {@code retry}: {@link #delayBefore(int)} less a random fraction of at
     * most {@link #jitter()} of it, drawn from {@code random}.
     *
     * @throws IllegalArgumentException if {@code retry < 1}
     */
    public Duration delayBefore(int retry, RandomGenerator random) {
        Duration full = delayBefore(retry);
        if (jitter == 0.0 || full.isZero()) {
            return full;
        }
        long nanos = full.toNanos();
        return Duration
                .ofNanos(nanos - (long) (nanos * jitter * Objects.requireNonNull(random, "random").nextDouble()));
    }

    /** A one-line description for effective-configuration logs. */
    @Override
    public String toString() {
        if (maxAttempts == 1) {
            return "RetryPolicy[none]";
        }
        return "RetryPolicy[maxAttempts=" + (maxAttempts == UNLIMITED ? "unlimited" : String.valueOf(maxAttempts))
                + ", initialDelay=" + initialDelay.toMillis() + "ms, multiplier=" + multiplier + ", maxDelay="
                + maxDelay.toMillis() + "ms, jitter=" + jitter + "]";
    }

    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    private static IllegalArgumentException invalid(String message) {
        return new IllegalArgumentException("RetryPolicy " + message);
    }
}
