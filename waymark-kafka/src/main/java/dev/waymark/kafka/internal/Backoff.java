package dev.waymark.kafka.internal;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.errors.InterruptException;

/** The wait after a failed broker attempt: {@code base} doubled per attempt, at most 5 s, jittered down to half. */
final class Backoff {

    private static final Duration MAX = Duration.ofSeconds(5);

    private Backoff() {}

    /**
     * Sleeps after failed attempt {@code attempt} (from 1).
     *
     * @throws InterruptException when interrupted, with the flag set again (as the Kafka clients do)
     */
    static void sleep(Duration base, int attempt) {
        long delay = Math.min(MAX.toMillis(), base.toMillis() << Math.min(attempt - 1, 16));
        if (delay <= 0) {
            return;
        }
        delay = delay / 2 + ThreadLocalRandom.current().nextLong(delay / 2 + 1); // jitter
        try {
            TimeUnit.MILLISECONDS.sleep(delay);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        }
    }
}
