package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The effect of the timing options of {@code Subscription.builder} (README, "Subscription.builder"
 * table): {@code retry(RetryPolicy)}, {@code Ack.retry(delay)} and
 * {@code checkpointEvery(events, interval)}. Timing assertions are lower bounds; upper bounds are
 * only the generous waits.
 */
class SubscriptionOptionsEffectTest {

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

    /** A fresh category per test, so tests do not see each other's events. */
    private static String fresh() {
        return "opt" + names.incrementAndGet();
    }

    private static String name(String category) {
        return "sub-" + category;
    }

    private static GlobalPosition checkpoint(String category) {
        return Checkpoints.of(store).get(name(category), Partition.WHOLE).orElseThrow();
    }

    /** The positions of a stream's first {@code n} events; element {@code i} is the (i+1)-th event's. */
    private static List<GlobalPosition> positions(String stream, int n) {
        List<RecordedEvent> events = store.readStreamForward(stream, 0, n);
        assertThat(events).hasSize(n);
        return events.stream().map(RecordedEvent::position).toList();
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** A checkpoint the worker wrote, with the monotonic time the listener heard of it. */
    private record Save(GlobalPosition position, long nanos) {}

    private static SubscriptionListener recording(List<Save> saves) {
        return new SubscriptionListener() {
            @Override
            public void checkpointed(SubscriptionConfig config, GlobalPosition position) {
                saves.add(new Save(position, System.nanoTime()));
            }
        };
    }

    @Test
    void retry_waits_the_error_delay_after_each_handler_exception_and_max_attempts_counts_every_delivery()
            throws Exception {
        String c = fresh();
        append(store, c + "-1", "A", "Flaky", "C");
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        List<Long> calls = new CopyOnWriteArrayList<>();
        Recorder recorder = new Recorder(d -> {
            if (d.event().type().equals("Flaky")) {
                calls.add(System.nanoTime());
                attempts.add(d.attempt());
                if (d.attempt() < 2) {
                    throw new IllegalStateException("flaky failure " + d.attempt());
                }
            }
            return Ack.ok();
        });
        Subscription s = Subscription.builder(store, name(c), Target.category(c))
                .retry(RetryPolicy.fixed(3, Duration.ofMillis(400)))
                .pollInterval(Duration.ofMillis(200))
                .start(recorder);
        try {
            await("the event after the failing one is delivered").atMost(WAIT)
                    .until(() -> recorder.types().contains("C"));
            // three deliveries in all (two failures, then ok): within a budget of 3, so no dead letter
            assertThat(recorder.types()).containsExactly("A", "Flaky", "Flaky", "Flaky", "C");
            assertThat(attempts).containsExactly(0, 1, 2);
            for (int i = 1; i < calls.size(); i++) {
                assertThat(millis(calls.get(i) - calls.get(i - 1)))
                        .as("gap between delivery %d and %d of the failing event (errorDelay 400 ms)", i - 1, i)
                        .isGreaterThanOrEqualTo(400);
            }
            GlobalPosition last = positions(c + "-1", 3).get(2);
            await("the checkpoint passes the failing event").atMost(WAIT)
                    .until(() -> checkpoint(c).equals(last)); // finally handled and passed
        } finally {
            s.stop(Duration.ofSeconds(5));
        }
        assertThat(s.isRunning()).isFalse();
        assertThat(s.failure()).isEmpty();
        assertThat(DeadLetters.of(store).count(name(c))).isZero();
    }

    @Test
    void ack_retry_redelivers_after_its_own_delay_not_the_error_delay() throws Exception {
        String c = fresh();
        append(store, c + "-1", "Later", "Next");
        List<Long> calls = new CopyOnWriteArrayList<>();
        Recorder recorder = new Recorder(d -> {
            if (d.event().type().equals("Later")) {
                calls.add(System.nanoTime());
                return d.attempt() == 0 ? Ack.retry(Duration.ofMillis(300)) : Ack.ok();
            }
            return Ack.ok();
        });
        // An error delay of an hour: the redelivery within the wait can only come from the Ack's delay.
        Subscription s = Subscription.builder(store, name(c), Target.category(c))
                .retry(RetryPolicy.fixed(5, Duration.ofHours(1)))
                .pollInterval(Duration.ofMillis(200))
                .start(recorder);
        try {
            await("redelivery after Ack.retry(300 ms), then the next event").atMost(WAIT)
                    .until(() -> recorder.types().contains("Next"));
            assertThat(recorder.types()).containsExactly("Later", "Later", "Next");
            assertThat(recorder.deliveries).extracting(Delivery::attempt).containsExactly(0, 1, 0);
            assertThat(calls).hasSize(2);
            assertThat(millis(calls.get(1) - calls.get(0)))
                    .as("gap between the Ack.retry(300 ms) and the redelivery")
                    .isGreaterThanOrEqualTo(300);
        } finally {
            s.stop(Duration.ofSeconds(5));
        }
        assertThat(s.isRunning()).isFalse();
        assertThat(DeadLetters.of(store).count(name(c))).isZero();
    }

    @Test
    void checkpoint_every_n_events_saves_exactly_at_every_nth_event_while_running() throws Exception {
        String c = fresh();
        String stream = c + "-1";
        store.append(stream, ExpectedVersion.any(), SubscriptionFixture.events(30)); // one page, visible at once
        List<GlobalPosition> pos = positions(stream, 30);
        CountDownLatch at25 = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<Save> saves = new CopyOnWriteArrayList<>();
        EventHandler handler = d -> {
            if (d.event().position().equals(pos.get(24))) {
                at25.countDown();
                release.await();
            }
            return Ack.ok();
        };
        Subscription s = Subscription.builder(store, name(c), Target.category(c))
                .checkpointEvery(10, Duration.ofHours(1)) // never due by time in this test
                .pollInterval(Duration.ofMillis(200))
                .listener(recording(saves))
                .start(handler);
        try {
            try {
                assertThat(at25.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
                // 24 events handled: saved after the 10th and the 20th, nothing after the 21st to 24th
                assertThat(checkpoint(c)).as("checkpoint while the 25th event is in the handler")
                        .isEqualTo(pos.get(19));
                assertThat(saves).extracting(Save::position).containsExactly(pos.get(9), pos.get(19));
            } finally {
                release.countDown();
            }
            // caught up with 5 unsaved events (26 to 30): written then, not left for the next 10
            await("checkpoint at the 30th event once caught up").atMost(WAIT)
                    .until(() -> checkpoint(c).equals(pos.get(29)));
            assertThat(s.stop(Duration.ofSeconds(5))).isTrue();
            assertThat(saves).extracting(Save::position).containsExactly(pos.get(9), pos.get(19), pos.get(29));
            assertThat(s.failure()).isEmpty();
        } finally {
            s.stop(Duration.ofSeconds(5)); // also when an assertion failed (stopping twice is harmless)
        }
    }

    /**
     * The interval is checked after each handled event (and when caught up), not by a timer: an
     * event handled once the interval has passed since the last save is saved, the clock restarts
     * there, and a handler that is blocked holds the checkpoint where it is.
     */
    @Test
    void checkpoint_interval_saves_the_first_event_handled_after_it_has_passed_and_not_by_count() throws Exception {
        String c = fresh();
        String stream = c + "-1";
        store.append(stream, ExpectedVersion.any(), SubscriptionFixture.events(30));
        List<GlobalPosition> pos = positions(stream, 30);
        CountDownLatch at25 = new CountDownLatch(1);
        CountDownLatch release25 = new CountDownLatch(1);
        CountDownLatch at27 = new CountDownLatch(1);
        CountDownLatch release27 = new CountDownLatch(1);
        List<Save> saves = new CopyOnWriteArrayList<>();
        EventHandler handler = d -> {
            if (d.event().position().equals(pos.get(24))) {
                at25.countDown();
                release25.await();
            } else if (d.event().position().equals(pos.get(26))) {
                at27.countDown();
                release27.await();
            }
            return Ack.ok();
        };
        long started = System.nanoTime();
        Subscription s = Subscription.builder(store, name(c), Target.category(c))
                .checkpointEvery(1_000_000, Duration.ofSeconds(1)) // never due by count in this test
                .pollInterval(Duration.ofMillis(200))
                .listener(recording(saves))
                .start(handler);
        List<Save> beforeRelease;
        try {
            try {
                assertThat(at25.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
                GlobalPosition blockedAt = checkpoint(c);
                int savesBlocked = saves.size();
                // blocked for longer than the interval: no save happens meanwhile (the check runs between events)
                await("checkpoint unchanged while the 25th event is in the handler")
                        .during(Duration.ofMillis(1500)).atMost(WAIT)
                        .until(() -> checkpoint(c).equals(blockedAt) && saves.size() == savesBlocked);
                release25.countDown();
                assertThat(at27.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
                // the 25th event was the first handled after the interval: saved; the 26th came right
                // after that save, within the interval again: not saved
                assertThat(checkpoint(c)).as("checkpoint while the 27th event is in the handler")
                        .isEqualTo(pos.get(24));
                beforeRelease = new ArrayList<>(saves);
            } finally {
                release25.countDown();
                release27.countDown();
            }
            assertThat(beforeRelease).isNotEmpty();
            assertThat(beforeRelease.get(beforeRelease.size() - 1).position()).isEqualTo(pos.get(24));
            assertThat(millis(beforeRelease.get(0).nanos() - started))
                    .as("first checkpoint write after the start (interval 1 s)")
                    .isGreaterThanOrEqualTo(1000);
            for (int i = 1; i < beforeRelease.size(); i++) {
                assertThat(millis(beforeRelease.get(i).nanos() - beforeRelease.get(i - 1).nanos()))
                        .as("gap between checkpoint writes %d and %d (interval 1 s): %s", i - 1, i, beforeRelease)
                        .isGreaterThanOrEqualTo(1000);
            }
            // caught up: the rest is written then
            await("checkpoint at the 30th event once caught up").atMost(WAIT)
                    .until(() -> checkpoint(c).equals(pos.get(29)));
            assertThat(s.stop(Duration.ofSeconds(5))).isTrue();
            assertThat(s.failure()).isEmpty();
        } finally {
            s.stop(Duration.ofSeconds(5)); // also when an assertion failed (stopping twice is harmless)
        }
    }

    /**
     * While one event is retried ({@code Ack.retry}), the events handled before it are saved once the
     * interval has passed: the wait between deliveries checks the interval as the gaps between
     * events do, so a restart does not replay everything before a long-retried event.
     */
    @Test
    void checkpoint_interval_saves_the_events_before_one_that_is_being_retried() throws Exception {
        String c = fresh();
        String stream = c + "-1";
        store.append(stream, ExpectedVersion.any(), SubscriptionFixture.events(10));
        List<GlobalPosition> pos = positions(stream, 10);
        AtomicInteger tenthDeliveries = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        EventHandler handler = d -> {
            if (d.event().position().equals(pos.get(9)) && release.getCount() > 0) {
                tenthDeliveries.incrementAndGet();
                return Ack.retry(Duration.ofMillis(100));
            }
            return Ack.ok();
        };
        Subscription s = Subscription.builder(store, name(c), Target.category(c))
                .checkpointEvery(1_000_000, Duration.ofMillis(500)) // never due by count in this test
                .retry(RetryPolicy.fixed(1_000_000, Duration.ofHours(1)))
                .pollInterval(Duration.ofMillis(200))
                .start(handler);
        try {
            await("checkpoint at the 9th event while the 10th is retried").atMost(WAIT)
                    .until(() -> checkpoint(c).equals(pos.get(8)));
            int deliveriesSoFar = tenthDeliveries.get();
            await("the 10th event still retried after the save").atMost(WAIT)
                    .until(() -> tenthDeliveries.get() > deliveriesSoFar);
            assertThat(checkpoint(c)).as("checkpoint while the 10th event is retried").isEqualTo(pos.get(8));
            release.countDown();
            await("checkpoint at the 10th event once it is handled").atMost(WAIT)
                    .until(() -> checkpoint(c).equals(pos.get(9)));
            assertThat(s.failure()).isEmpty();
            assertThat(DeadLetters.of(store).count(name(c))).isZero();
        } finally {
            release.countDown();
            s.stop(Duration.ofSeconds(5));
        }
    }
}
