package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.testkit.PostgresExtension;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link HeadWatch#awaitHeadPast}: a waiter sleeps through probes that find the head where it was
 * (issue 34: idle readers sit on the wake signal) and wakes when one finds it moved.
 */
class HeadWatchTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static EventStore writer;

    @BeforeAll
    static void setUp() {
        writer = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        writer.close();
    }

    @Test
    void a_waiter_for_the_head_sleeps_through_probes_that_find_nothing_and_wakes_when_the_head_moves()
            throws Exception {
        writer.append("watched-1", ExpectedVersion.any(), StoreFixture.events(1));
        try (EventStore store = EventStore.builder(POSTGRES.newDataSource(4)).fallbackPoll(Duration.ofMillis(50))
                .build()) {
            HeadWatch watch = store.headWatch();
            awaitProbes(watch, 2);
            GlobalPosition head = watch.latest().head();
            assertThat(head).isEqualTo(store.headPosition());
            // the head already past: no wait at all
            assertThat(watch.awaitHeadPast(GlobalPosition.START, Duration.ofMinutes(1)).head()).isEqualTo(head);

            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            AtomicLong waiterId = new AtomicLong();
            CompletableFuture<HeadProbe> woken = new CompletableFuture<>();
            Thread waiter = Thread.ofPlatform().name("head-waiter").start(() -> {
                waiterId.set(Thread.currentThread().threadId());
                try {
                    woken.complete(watch.awaitHeadPast(head, Duration.ofMinutes(1)));
                } catch (Throwable e) {
                    woken.completeExceptionally(e);
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> waiter.getState() == Thread.State.TIMED_WAITING);
            long parks = threads.getThreadInfo(waiterId.get()).getWaitedCount();
            long sequence = watch.latest().sequence();
            awaitProbes(watch, 20); // twenty probes, a second at 50 ms, each finding the same head

            // before: a waiter on awaitAfter woke on every probe (20 and more parks)
            assertThat(threads.getThreadInfo(waiterId.get()).getWaitedCount() - parks).as("wake-ups while idle")
                    .isLessThanOrEqualTo(1);
            assertThat(watch.latest().sequence()).isGreaterThanOrEqualTo(sequence + 20);
            assertThat(woken).isNotDone();

            writer.append("watched-1", ExpectedVersion.any(), StoreFixture.events(1));
            HeadProbe probe = woken.get(10, TimeUnit.SECONDS); // the NOTIFY or the 50 ms fallback probe
            assertThat(probe.head().isAfter(head)).isTrue();
            assertThat(probe.head()).isEqualTo(store.headPosition());
            waiter.join(Duration.ofSeconds(5));
        }
    }

    @Test
    void a_waiter_for_the_head_times_out_when_nothing_moves() throws Exception {
        try (EventStore store = EventStore.builder(POSTGRES.newDataSource(2)).fallbackPoll(Duration.ofMillis(50))
                .build()) {
            HeadWatch watch = store.headWatch();
            awaitProbes(watch, 1);
            GlobalPosition head = watch.latest().head();
            long started = System.nanoTime();
            HeadProbe probe = watch.awaitHeadPast(head, Duration.ofMillis(300));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            assertThat(probe.head()).isEqualTo(head);
        }
    }

    private static void awaitProbes(HeadWatch watch, int count) {
        long target = watch.latest().sequence() + count;
        await().atMost(Duration.ofSeconds(30)).until(() -> watch.latest().sequence() >= target);
    }
}
