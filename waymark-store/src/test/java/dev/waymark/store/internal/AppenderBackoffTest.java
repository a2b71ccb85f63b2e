package dev.waymark.store.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The pause between two attempts of a store-managed append: doubling, capped, jittered. */
class AppenderBackoffTest {

    @Test
    void each_pause_is_half_to_all_of_a_doubling_capped_backoff_and_varies() {
        SplittableRandom random = new SplittableRandom(42);
        long[] fullMillis = {10, 20, 40, 50, 50, 50};
        for (int retry = 1; retry <= fullMillis.length; retry++) {
            Duration full = Duration.ofMillis(fullMillis[retry - 1]);
            Set<Duration> seen = new HashSet<>();
            for (int i = 0; i < 1_000; i++) {
                Duration pause = Appender.RETRY.delayBefore(retry, random);
                assertThat(pause).as("retry %d", retry).isBetween(full.dividedBy(2), full);
                seen.add(pause);
            }
            assertThat(seen).as("jitter of retry %d", retry).hasSizeGreaterThan(100);
        }
        assertThat(Appender.RETRY.delayBefore(Integer.MAX_VALUE, random)).isLessThanOrEqualTo(Duration.ofMillis(50));
        assertThat(Appender.RETRY.maxAttempts()).isEqualTo(5);
    }
}
