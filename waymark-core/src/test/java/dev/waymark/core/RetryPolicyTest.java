package dev.waymark.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The one retry shape: factories, validation, and the one backoff computation every component uses. */
class RetryPolicyTest {

    @Test
    void none_makes_one_attempt() {
        RetryPolicy none = RetryPolicy.none();
        assertThat(none.maxAttempts()).isEqualTo(1);
        assertThat(none.retries()).isFalse();
        assertThat(none.allowsAnotherAttempt(1)).isFalse();
        assertThat(none).hasToString("RetryPolicy[none]");
    }

    @Test
    void fixed_waits_the_same_delay_before_every_retry() {
        RetryPolicy fixed = RetryPolicy.fixed(4, Duration.ofMillis(250));
        assertThat(fixed.delayBefore(1)).isEqualTo(Duration.ofMillis(250));
        assertThat(fixed.delayBefore(3)).isEqualTo(Duration.ofMillis(250));
        assertThat(fixed.allowsAnotherAttempt(3)).isTrue();
        assertThat(fixed.allowsAnotherAttempt(4)).isFalse();
    }

    @Test
    void exponential_doubles_up_to_the_cap_and_never_overflows() {
        RetryPolicy p = RetryPolicy.exponential(RetryPolicy.UNLIMITED, Duration.ofMillis(100), Duration.ofSeconds(1));
        assertThat(p.delayBefore(1)).isEqualTo(Duration.ofMillis(100));
        assertThat(p.delayBefore(2)).isEqualTo(Duration.ofMillis(200));
        assertThat(p.delayBefore(4)).isEqualTo(Duration.ofMillis(800));
        assertThat(p.delayBefore(5)).isEqualTo(Duration.ofSeconds(1));
        assertThat(p.delayBefore(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(1));
        assertThat(p.allowsAnotherAttempt(Integer.MAX_VALUE - 1)).isTrue();
        RetryPolicy huge = RetryPolicy.exponential(3, Duration.ofDays(1), Duration.ofSeconds(Long.MAX_VALUE));
        assertThat(huge.delayBefore(1000)).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
    }

    @Test
    void multiplier_grows_the_delay_by_its_factor() {
        RetryPolicy p = RetryPolicy.exponential(5, Duration.ofMillis(100), Duration.ofMinutes(1)).withMultiplier(3.0);
        assertThat(p.delayBefore(3)).isEqualTo(Duration.ofMillis(900));
    }

    @Test
    void jitter_takes_at_most_its_fraction_away() {
        RetryPolicy p = RetryPolicy.fixed(3, Duration.ofMillis(1000)).withJitter(0.5);
        Random random = new Random(42);
        long min = Long.MAX_VALUE;
        long max = 0;
        for (int i = 0; i < 1000; i++) {
            long ms = p.delayBefore(1, random).toMillis();
            min = Math.min(min, ms);
            max = Math.max(max, ms);
        }
        assertThat(min).isBetween(500L, 520L);
        assertThat(max).isBetween(980L, 1000L);
        assertThat(RetryPolicy.fixed(3, Duration.ofMillis(1000)).delayBefore(1, random))
                .isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void invalid_values_fail_naming_the_component_and_the_value() {
        assertThatThrownBy(() -> RetryPolicy.fixed(0, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxAttempts")
                .hasMessageContaining("0");
        assertThatThrownBy(() -> RetryPolicy.fixed(2, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("initialDelay");
        assertThatThrownBy(() -> RetryPolicy.fixed(2, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("initialDelay");
        assertThatThrownBy(() -> RetryPolicy.exponential(2, Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxDelay");
        assertThatThrownBy(() -> RetryPolicy.fixed(2, Duration.ZERO).withMultiplier(0.5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiplier")
                .hasMessageContaining("0.5");
        assertThatThrownBy(() -> RetryPolicy.fixed(2, Duration.ZERO).withMultiplier(Double.NaN))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiplier");
        assertThatThrownBy(() -> RetryPolicy.fixed(2, Duration.ZERO).withJitter(1.5))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("jitter");
        assertThatThrownBy(() -> RetryPolicy.fixed(2, Duration.ZERO).delayBefore(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retry");
    }

    @Test
    void equal_policies_are_equal_values() {
        assertThat(RetryPolicy.fixed(3, Duration.ofSeconds(1)))
                .isEqualTo(new RetryPolicy(3, Duration.ofSeconds(1), 1.0, Duration.ofSeconds(1), 0.0));
        assertThat(RetryPolicy.exponential(3, Duration.ofSeconds(1), Duration.ofSeconds(4)).toString())
                .isEqualTo(
                        "RetryPolicy[maxAttempts=3, initialDelay=1000ms, multiplier=2.0, maxDelay=4000ms, jitter=0.0]");
    }
}
