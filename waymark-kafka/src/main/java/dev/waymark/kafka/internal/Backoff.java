package dev.waymark.kafka.internal;

import dev.waymark.store.RetryPolicy;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.InterruptException;

/** The wait after a failed broker attempt, as the source's broker {@link RetryPolicy} says. */
final class Backoff {

    private Backoff() {}

    /**
     * Sleeps after failed attempt {@code attempt} (from 1) the policy's delay before the next one.
     *
     * @throws InterruptException when interrupted, with the flag set again (as the Kafka clients do)
     */
    static void sleep(RetryPolicy policy, int attempt) {
        long delay = policy.delayBefore(attempt, ThreadLocalRandom.current()).toNanos();
        if (delay <= 0) {
            return;
        }
        try {
            TimeUnit.NANOSECONDS.sleep(delay);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        }
    }
}
