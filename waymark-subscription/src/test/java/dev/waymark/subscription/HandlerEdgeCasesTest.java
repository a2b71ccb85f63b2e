package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a plain subscription does with handlers that misbehave at the edges: a retry asked for while
 * stopping, an interrupt flag left set, durations too long to count in nanoseconds, and invalid
 * arguments (each refused with the problem named, before anything is written).
 */
class HandlerEdgeCasesTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static final AtomicInteger names = new AtomicInteger();

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static String fresh() {
        return "edge" + names.incrementAndGet();
    }

    private static SubscriptionBuilder builder(String category) {
        return Subscription.builder(store, "sub-" + category, Target.category(category))
                .pollInterval(Duration.ofMillis(200));
    }

    private static GlobalPosition checkpoint(String category) {
        return Checkpoints.of(store).get("sub-" + category, Partition.WHOLE).orElseThrow();
    }

    private static GlobalPosition position(String stream, int index) {
        return store.readStreamForward(stream, 0, index + 1).get(index).position();
    }

    @Test
    void a_retry_asked_for_by_a_handler_interrupted_by_the_stop_is_not_counted_or_dead_lettered() throws Exception {
        String c = fresh();
        append(store, c + "-1", "A", "Slow", "C");
        CountDownLatch inSlow = new CountDownLatch(1);
        Recorder recorder = new Recorder(d -> {
            if (d.event().type().equals("Slow")) {
                inSlow.countDown();
                try {
                    new CountDownLatch(1).await(); // never ends by itself
                } catch (InterruptedException e) {
                    return Ack.retry(Duration.ZERO); // a common handler: "try again later"
                }
            }
            return Ack.ok();
        });
        // one attempt: before, the retry spent the budget and the event was dead-lettered at the stop
        Subscription s = builder(c).retry(RetryPolicy.fixed(1, Duration.ZERO)).checkpointEvery(1, Duration.ZERO)
                .start(recorder);
        assertThat(inSlow.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(s.stop(Duration.ofMillis(100))).isTrue();
        assertThat(DeadLetters.of(store).count("sub-" + c)).isZero();
        assertThat(checkpoint(c)).isEqualTo(position(c + "-1", 0));
        assertThat(s.failure()).isEmpty();
    }

    @Test
    void an_interrupt_flag_left_set_by_a_handler_is_cleared_and_the_subscription_goes_on() {
        String c = fresh();
        append(store, c + "-1", "Restores", "B");
        Recorder recorder = new Recorder(d -> {
            if (d.event().type().equals("Restores")) {
                Thread.currentThread().interrupt(); // "restore the interrupt" after catching one of its own
            }
            return Ack.ok();
        });
        try (Subscription s = builder(c).start(recorder)) {
            await().atMost(WAIT).until(() -> recorder.size() == 2);
            // before: the next wait for events threw, and the subscription ended as if stopped, no failure
            append(store, c + "-1", "Later");
            await().atMost(WAIT).until(() -> recorder.types().contains("Later"));
            assertThat(s.isRunning()).isTrue();
            assertThat(s.failure()).isEmpty();
        }
    }

    @Test
    void durations_too_long_for_nanoseconds_mean_never_instead_of_failing_the_subscription() {
        String c = fresh();
        append(store, c + "-1", "Later", "B");
        Duration forever = ChronoUnit.FOREVER.getDuration();
        Recorder recorder = new Recorder(d -> d.event().type().equals("Later") && d.attempt() == 0
                ? Ack.retry(Duration.ofMillis(Long.MAX_VALUE))
                : Ack.ok());
        Subscription s = builder(c).checkpointEvery(1_000_000, forever).retry(RetryPolicy.fixed(3, forever))
                .start(recorder);
        try {
            // the retry waits "for ever": the subscription is running and still at its first delivery
            await().atMost(WAIT).until(() -> recorder.size() == 1);
            await("still running, waiting to redeliver").during(Duration.ofSeconds(1)).atMost(WAIT)
                    .until(() -> s.isRunning() && s.failure().isEmpty() && recorder.size() == 1);
        } finally {
            // a grace that long is the same as waiting for the stop: it comes at once here
            assertThat(s.stop(forever)).isTrue();
        }
        assertThat(s.failure()).isEmpty();
    }

    @Test
    void invalid_event_types_and_dead_letter_reasons_are_refused_with_the_problem_named() {
        assertThatThrownBy(() -> builder(fresh()).eventTypes((String[]) null).start(Recorder.ok()))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("eventTypes must not be null");
        assertThatThrownBy(() -> builder(fresh()).eventTypes("A", null).start(Recorder.ok()))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("null or blank type");
        assertThatThrownBy(() -> builder(fresh()).eventTypes(" ").start(Recorder.ok()))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("null or blank type");
        assertThatThrownBy(() -> DeadLetterReason.other(null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("summary");
        assertThatThrownBy(() -> DeadLetterReason.other("", "{}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("summary");
    }

    @Test
    void a_handler_building_an_invalid_dead_letter_reason_is_retried_instead_of_jamming_the_reader() {
        String c = fresh();
        append(store, c + "-1", "Bad", "B");
        Recorder recorder = new Recorder(d -> d.event().type().equals("Bad")
                ? Ack.deadLetter(DeadLetterReason.other(null, null))
                : Ack.ok());
        try (Subscription s = builder(c).retry(RetryPolicy.fixed(2, Duration.ZERO)).start(recorder)) {
            // before: the insert failed on the NOT NULL summary, not retryable: the subscription failed
            // on that event, and again after every restart
            await().atMost(WAIT).until(() -> recorder.types().contains("B"));
            assertThat(recorder.types()).containsExactly("Bad", "Bad", "B");
            assertThat(s.failure()).isEmpty();
        }
        RecordedEvent bad = store.readStreamForward(c + "-1", 0, 1).get(0);
        assertThat(DeadLetters.of(store).list("sub-" + c, Long.MAX_VALUE, 10)).singleElement()
                .satisfies(l -> {
                    assertThat(l.eventId()).isEqualTo(bad.eventId());
                    assertThat(l.reasonKind()).isEqualTo("max_attempts");
                });
    }
}
