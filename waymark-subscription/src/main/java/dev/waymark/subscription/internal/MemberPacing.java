package dev.waymark.subscription.internal;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.StoreException;
import dev.waymark.subscription.CheckpointMissingException;
import dev.waymark.subscription.ConsumerGroupSizeMismatchException;
import dev.waymark.subscription.LeaseLostException;
import dev.waymark.subscription.SubscriptionConfig;
import dev.waymark.subscription.SubscriptionListener;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The waits of one subscription member: pauses that notice a stop within a slice, database steps
 * retried with {@link #DATABASE_RETRY}, and listener calls that cannot break the loop.
 */
final class MemberPacing {

    /**
     * Transient and connection failures of the member's own database steps: retried for as long as
     * the member runs, 100 ms doubling up to 30 s, a random half to all of each pause taken so that
     * the readers of a pool do not retry in step.
     */
    static final RetryPolicy DATABASE_RETRY = RetryPolicy
            .exponential(RetryPolicy.UNLIMITED, Duration.ofMillis(100), Duration.ofSeconds(30))
            .withJitter(0.5);

    private static final Logger log = LoggerFactory.getLogger(SubscriptionWorker.class);
    private static final Duration WAIT_SLICE = Duration.ofMillis(100);

    private final SubscriptionConfig config;
    private final SubscriptionListener listener;
    private final BooleanSupplier stopping;

    MemberPacing(SubscriptionConfig config, SubscriptionListener listener, BooleanSupplier stopping) {
        this.config = config;
        this.listener = listener;
        this.stopping = stopping;
    }

    /** A database step. */
    interface Attempt<T> {
        T run();
    }

    /** Runs a database step, retrying transient and connection failures as {@link #DATABASE_RETRY} says. */
    <T> T retrying(String what, Attempt<T> attempt) throws InterruptedException {
        for (int retry = 1;; retry++) {
            try {
                return attempt.run();
            } catch (LeaseLostException | CheckpointMissingException | ConsumerGroupSizeMismatchException e) {
                throw e;
            } catch (StoreException e) {
                if (stopping.getAsBoolean()) {
                    throw new InterruptedException("stopped while retrying " + what);
                }
                if (!e.isRetryable() || !DATABASE_RETRY.allowsAnotherAttempt(retry)) {
                    throw e;
                }
                Duration wait = DATABASE_RETRY.delayBefore(retry, ThreadLocalRandom.current());
                log.warn("subscription {}: {} failed, retrying in {} ms: {}", config.memberLabel(), what,
                        wait.toMillis(), e.toString());
                safely(() -> listener.failed(config, e));
                pause(wait);
            }
        }
    }

    /** Sleeps in slices so that a stop is noticed promptly; returns early when one is. */
    void pause(Duration delay) throws InterruptedException {
        long total = Durations.nanos(delay);
        long start = System.nanoTime();
        while (!stopping.getAsBoolean()) {
            long left = total - (System.nanoTime() - start);
            if (left <= 0) {
                return;
            }
            TimeUnit.NANOSECONDS.sleep(Math.min(left, WAIT_SLICE.toNanos()));
        }
    }

    /** Calls a listener; its failure is logged, never thrown into the member's loop. */
    void safely(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | LinkageError | AssertionError e) {
            log.warn("subscription {}: listener failed: {}", config.memberLabel(), e.toString());
        }
    }
}
