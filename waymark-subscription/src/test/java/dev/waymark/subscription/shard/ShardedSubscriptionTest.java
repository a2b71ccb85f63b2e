package dev.waymark.subscription.shard;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.internal.SubscriptionReaders;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Real sharded workers in one JVM: draining, graceful hand-over, poison events, zombies. */
class ShardedSubscriptionTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void stopping_a_worker_whose_handlers_ignore_interrupts_returns_after_the_grace_and_keeps_their_leases() {
        append("stubborn", 60, 1); // every one of the three buckets gets events
        AtomicInteger held = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        Set<Integer> stuck = ConcurrentHashMap.newKeySet();
        ShardedSubscription worker = ShardedSubscription.builder(store, "stubborn", Target.category("stubborn"))
                .shards(3).leaseTtl(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(500))
                .listener(recordingStuck(stuck))
                .start(d -> stubborn(held, release));
        try {
            await().atMost(WAIT).until(() -> held.get() == 3); // each bucket's reader is held by its handler
            long started = System.nanoTime();
            assertThat(worker.stop(Duration.ofSeconds(1))).as("readers still running: not stopped").isFalse();
            Duration took = Duration.ofNanos(System.nanoTime() - started);
            // the handlers get the grace (1 s) side by side, then an interrupt and 250 ms more (half
            // the renew interval): about 1.25 s. Before: 10 s more after each interrupt (11 s or
            // more), and the leases were released while the handlers still ran. The upper bound
            // leaves room for a loaded machine and still tells the two apart.
            assertThat(took).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(8));
            assertThat(ShardedSubscription.ownership(store, "stubborn"))
                    .allSatisfy(o -> assertThat(o.owner()).contains(worker.workerId()));
            assertThat(stuck).containsExactlyInAnyOrder(0, 1, 2);
        } finally {
            release.countDown();
        }
    }

    @Test
    void stop_answers_true_when_every_reader_ended_and_the_pool_closes_in_try_with_resources() {
        append("tidy", 6, 1);
        AtomicInteger handled = new AtomicInteger();
        ShardedSubscription closed;
        try (ShardedSubscription worker = ShardedSubscription.builder(store, "tidy", Target.category("tidy"))
                .shards(2).leaseTtl(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(500))
                .start(d -> {
                    handled.incrementAndGet();
                    return Ack.ok();
                })) {
            closed = worker;
            await().atMost(WAIT).until(() -> handled.get() == 6);
            assertThat(worker.stop(Duration.ofSeconds(5))).isTrue();
        }
        assertThat(closed.isRunning()).isFalse();
        assertThat(closed.stop(Duration.ZERO)).as("stopping again answers for the same stop").isTrue();
        assertThatThrownBy(() -> closed.stop(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void an_interrupted_stop_of_readers_reports_the_ones_still_running_as_draining() {
        append("interrupted", 60, 1);
        AtomicInteger held = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        SubscriptionReaders readers = new SubscriptionReaders(store, "interrupted",
                ShardOptions.defaults(Target.category("interrupted"), 2), "w-1", d -> stubborn(held, release),
                Duration.ofMillis(100));
        readers.start(0, 1);
        readers.start(1, 1);
        await().atMost(WAIT).until(() -> held.get() == 2);
        AtomicReference<Set<Integer>> reported = new AtomicReference<>();
        AtomicLong interruptKept = new AtomicLong();
        Thread stopper = Thread.ofPlatform().start(() -> {
            reported.set(readers.stop(List.of(0, 1)));
            interruptKept.set(Thread.currentThread().isInterrupted() ? 1 : 0);
        });
        stopper.interrupt(); // as a worker's stop interrupts a pass that is shedding
        await().atMost(WAIT).until(() -> reported.get() != null);
        // before: the stop returned at once, and the pass gave the leases up while both handlers ran
        assertThat(reported.get()).containsExactly(0, 1);
        assertThat(interruptKept.get()).as("the interrupt is kept for the caller").isEqualTo(1);
        assertThat(readers.draining()).containsExactlyInAnyOrder(0, 1);
        assertThat(readers.running()).isEmpty();
        assertThat(readers.stop(0)).as("still draining").isFalse();
        release.countDown();
        await().atMost(WAIT).until(() -> readers.draining().isEmpty());
        assertThat(readers.stop(0)).isTrue();
    }

    @Test
    void a_bucket_whose_handler_ignores_its_interrupt_is_not_handed_over_until_the_handler_returns() {
        append("sticky", 40, 1); // both buckets get events
        AtomicInteger held = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        Set<Integer> stuck = ConcurrentHashMap.newKeySet();
        Set<Integer> bucketsSeenByB = ConcurrentHashMap.newKeySet();
        ShardedSubscription a = ShardedSubscription.builder(store, "sticky", Target.category("sticky"))
                .shards(2).leaseTtl(Duration.ofSeconds(3)).renewInterval(Duration.ofMillis(500))
                .listener(recordingStuck(stuck))
                .start(d -> d.bucket() == 1 ? stubborn(held, release) : Ack.ok());
        ShardedSubscription b = null;
        try {
            await().atMost(WAIT).until(() -> held.get() == 1 && a.ownedBuckets().equals(Set.of(0, 1)));
            b = ShardedSubscription.builder(store, "sticky", Target.category("sticky"))
                    .shards(2).leaseTtl(Duration.ofSeconds(3)).renewInterval(Duration.ofMillis(500))
                    .start(d -> {
                        bucketsSeenByB.add(d.bucket());
                        return Ack.ok();
                    });
            // a sheds bucket 1 for b; its reader does not stop (the grace, an interrupt, the grace again)
            await().atMost(WAIT).until(() -> stuck.contains(1));
            // before: a gave the lease up anyway and b handled bucket 1 beside the stuck handler
            ShardedSubscription joiner = b;
            // for longer than the lease's TTL: a's passes keep renewing it
            await().during(Duration.ofSeconds(4)).atMost(WAIT).until(() -> ownerOf("sticky", 1).equals(a.workerId())
                    && !bucketsSeenByB.contains(1) && joiner.stats().ownedBuckets() <= 1);
            assertThat(a.stats().stuckReaders()).isEqualTo(1);

            // stopping a: bucket 1 keeps its lease until it runs out (ReconcilePassTest shows that
            // leaving releases the other buckets)
            a.stop(Duration.ofMillis(200));
            assertThat(ownerOf("sticky", 1)).isEqualTo(a.workerId());
            assertThat(ownerOf("sticky", 0)).isEqualTo(joiner.workerId()); // shed in bucket 1's place

            release.countDown(); // the stuck handler returns; after the lease's TTL b takes bucket 1 over
            await().atMost(WAIT).until(() -> bucketsSeenByB.contains(1) && joiner.ownedBuckets().equals(Set.of(0, 1)));
        } finally {
            release.countDown();
            a.stop(Duration.ofMillis(200));
            if (b != null) {
                b.stop(Duration.ofSeconds(1));
            }
        }
    }

    @Test
    void a_stopping_worker_keeps_renewing_the_lease_of_a_handler_finishing_within_the_grace() throws Exception {
        append("graceful", 1, 1);
        AtomicInteger held = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        List<String> seenByB = new CopyOnWriteArrayList<>();
        ShardedSubscription a = ShardedSubscription.builder(store, "graceful", Target.category("graceful"))
                .shards(1).leaseTtl(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(500))
                .start(d -> stubborn(held, release));
        ShardedSubscription b = null;
        Thread stopper = null;
        try {
            await().atMost(WAIT).until(() -> held.get() == 1);
            b = ShardedSubscription.builder(store, "graceful", Target.category("graceful"))
                    .shards(1).leaseTtl(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(500))
                    .start(d -> {
                        seenByB.add(d.event().streamName());
                        return Ack.ok();
                    });
            // a grace (10 s) far longer than the lease (2 s): the handler may use it
            stopper = Thread.ofPlatform().start(() -> a.stop(Duration.ofSeconds(10)));
            // for longer than the lease's TTL: the stopping worker keeps the lease renewed (before: it
            // expired 2 s after the last pass, and b delivered the event beside the running handler)
            await("the stopping worker holds the lease and b delivers nothing").during(Duration.ofSeconds(3))
                    .atMost(WAIT).until(() -> ownerOf("graceful", 0).equals(a.workerId()) && seenByB.isEmpty());
            release.countDown(); // the handler returns within the grace: acknowledged, checkpoint written
            stopper.join(WAIT.toMillis());
            assertThat(stopper.isAlive()).isFalse();
            ShardedSubscription joiner = b;
            await().atMost(WAIT).until(() -> joiner.ownedBuckets().equals(Set.of(0)));
            GlobalPosition event = store.readStreamForward("graceful-0", 0, 1).get(0).position();
            assertThat(Checkpoints.of(store).get("graceful", Partition.of(0, 1))).contains(event);
            await().during(Duration.ofSeconds(1)).atMost(WAIT).until(seenByB::isEmpty);
        } finally {
            release.countDown();
            if (stopper != null) {
                stopper.join(WAIT.toMillis());
            }
            a.stop(Duration.ofMillis(200));
            if (b != null) {
                b.stop(Duration.ofSeconds(1));
            }
        }
    }

    /** A listener that adds every bucket reported stuck to {@code stuck}. */
    private static ShardListener recordingStuck(Set<Integer> stuck) {
        return new ShardListener() {
            @Override
            public void readerStuck(String workerId, int bucket) {
                stuck.add(bucket);
            }
        };
    }

    private static String ownerOf(String pool, int bucket) {
        return ShardedSubscription.ownership(store, pool).get(bucket).owner().orElse("-");
    }

    /** A handler stuck in something that ignores interrupts (uninterruptible I/O) until released. */
    private static Ack stubborn(AtomicInteger held, CountDownLatch release) {
        held.incrementAndGet();
        boolean interrupted = false;
        while (release.getCount() > 0) {
            try {
                release.await();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return Ack.ok();
    }

    private static void append(String category, int streams, int perStream) {
        for (int v = 0; v < perStream; v++) {
            for (int s = 0; s < streams; s++) {
                String type = "Poison".equals(category) ? "E" : "E";
                store.append(category + "-" + s, ExpectedVersion.any(), EventData.json(type, "{}"));
            }
        }
    }

    private static ShardedSubscriptionBuilder pool(String name, String category, int shards) {
        return ShardedSubscription.builder(store, name, Target.category(category))
                .shards(shards)
                .leaseTtl(Duration.ofSeconds(3))
                .renewInterval(Duration.ofMillis(300))
                .retry(RetryPolicy.fixed(3, Duration.ZERO));
    }

    private static boolean checkpointsAtHead(String name, String category, int shards) {
        for (int b = 0; b < shards; b++) {
            Partition p = Partition.of(b, shards);
            List<RecordedEvent> last = store.readCategoryBackward(category, GlobalPosition.END, 100_000).stream()
                    .filter(e -> p.owns(e.streamName())).limit(1).toList();
            if (last.isEmpty()) {
                continue;
            }
            // at its last event, or past it once the bucket's cursor moved up to the horizon
            if (Checkpoints.of(store).get(name, p).filter(at -> !last.get(0).position().isAfter(at)).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    @Test
    void two_workers_drain_a_category_once_each_with_one_worker_per_stream_and_hand_over_on_stop() {
        append("drain", 12, 5);
        Map<UUID, String> handledBy = new ConcurrentHashMap<>();
        Map<String, Set<String>> workersOfStream = new ConcurrentHashMap<>();
        List<UUID> all = new CopyOnWriteArrayList<>();
        ShardHandler record = d -> Ack.ok();
        // a lease far longer than the hand-over may take: b can only get a's buckets that fast if a
        // released them, not by waiting for them to expire
        Duration ttl = Duration.ofSeconds(30);
        ShardedSubscription a = pool("drainer", "drain", 4).leaseTtl(ttl).start(d -> {
            all.add(d.event().eventId());
            handledBy.put(d.event().eventId(), "a");
            workersOfStream.computeIfAbsent(d.event().streamName(), k -> ConcurrentHashMap.newKeySet()).add("a");
            return record.handle(d);
        });
        ShardedSubscription b = pool("drainer", "drain", 4).leaseTtl(ttl).start(d -> {
            all.add(d.event().eventId());
            handledBy.put(d.event().eventId(), "b");
            workersOfStream.computeIfAbsent(d.event().streamName(), k -> ConcurrentHashMap.newKeySet()).add("b");
            return Ack.ok();
        });
        try {
            await().atMost(WAIT).until(() -> handledBy.size() == 60 && checkpointsAtHead("drainer", "drain", 4));
            await().atMost(WAIT).until(() -> a.ownedBuckets().size() == 2 && b.ownedBuckets().size() == 2);
            assertThat(all).hasSize(60).doesNotHaveDuplicates();
            assertThat(workersOfStream.values()).allSatisfy(w -> assertThat(w).hasSize(1));
        } finally {
            a.stop(Duration.ofSeconds(5));
        }
        // a released its buckets at once: b takes them within a few passes, long before the 30 s
        // leases a renewed just before stopping could expire (at least 29.7 s after the stop)
        Instant stopped = Instant.now();
        await().atMost(ttl.dividedBy(2)).until(() -> b.ownedBuckets().size() == 4);
        assertThat(Duration.between(stopped, Instant.now())).isLessThan(ttl.dividedBy(2));
        append("drain", 12, 1);
        await().atMost(WAIT).until(() -> handledBy.size() == 72);
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        dev.waymark.subscription.micrometer.ShardMetrics.bind(b, "drainer", registry);
        assertThat(registry.get("waymark.shard.owned").tag("worker", b.workerId()).gauge().value()).isEqualTo(4);
        assertThat(registry.get("waymark.shard.deliveries").functionCounter().count())
                .isEqualTo(b.stats().deliveries()).isGreaterThan(0);
        assertThat(registry.get("waymark.shard.claims").functionCounter().count()).isGreaterThanOrEqualTo(4);
        b.stop(Duration.ofSeconds(5));
        assertThat(b.ownership()).allSatisfy(o -> assertThat(o.owner()).isEmpty());
        assertThat(registry.get("waymark.shard.owned").gauge().value()).isZero();
    }

    @Test
    void the_pass_loop_goes_on_after_a_pass_threw_an_error() {
        append("overflow", 4, 2);
        Set<UUID> handled = ConcurrentHashMap.newKeySet();
        ShardListener overflowing = new ShardListener() {
            @Override
            public void passCompleted(String workerId, Set<Integer> owned, int liveWorkers) {
                throw new StackOverflowError("injected"); // no listener guard catches it
            }
        };
        ShardedSubscription pool = pool("overflower", "overflow", 2).listener(overflowing).start(d -> {
            handled.add(d.event().eventId());
            return Ack.ok();
        });
        try {
            await().atMost(WAIT).until(() -> handled.size() == 8);
            // before: the loop's thread had ended at the first pass, renewals stopped, the leases
            // lapsed after 3 s, and the readers died at their next fenced checkpoint
            await().during(Duration.ofSeconds(4)).atMost(WAIT).until(pool::isRunning);
            append("overflow", 4, 1);
            await().atMost(WAIT).until(() -> handled.size() == 12 && checkpointsAtHead("overflower", "overflow", 2));
        } finally {
            pool.stop(Duration.ofSeconds(5));
        }
    }

    @Test
    void a_throwing_handler_is_redelivered_after_the_retry_delay_and_the_simple_form_acknowledges_on_return() {
        append("flaky", 4, 2);
        UUID failsOnce = store.readStreamForward("flaky-1", 0, 1).get(0).eventId();
        Duration delay = Duration.ofMillis(400);
        List<Long> failingCalls = new CopyOnWriteArrayList<>();
        Set<UUID> handled = ConcurrentHashMap.newKeySet();
        ShardedSubscription w = pool("flaky-pool", "flaky", 2).retry(RetryPolicy.fixed(5, delay)).start(d -> {
            RecordedEvent e = d.event();
            if (e.eventId().equals(failsOnce)) {
                failingCalls.add(System.nanoTime());
                if (failingCalls.size() == 1) {
                    throw new IllegalStateException("downstream unavailable");
                }
            }
            handled.add(e.eventId());
            return Ack.ok();
        });
        try {
            await().atMost(WAIT).until(() -> handled.size() == 8 && checkpointsAtHead("flaky-pool", "flaky", 2));
            assertThat(failingCalls).hasSize(2);
            assertThat(Duration.ofNanos(failingCalls.get(1) - failingCalls.get(0))).isGreaterThanOrEqualTo(delay);
            assertThat(DeadLetters.of(store).count("flaky-pool")).isZero();
        } finally {
            w.stop(Duration.ofSeconds(5));
        }
    }

    @Test
    void a_poison_event_is_dead_lettered_after_the_budget_and_the_rest_drains() {
        append("toxic", 6, 3);
        UUID poison = store.readStreamForward("toxic-2", 1, 1).get(0).eventId();
        Set<UUID> handled = ConcurrentHashMap.newKeySet();
        List<Integer> poisonAttempts = new CopyOnWriteArrayList<>();
        ShardedSubscription w = pool("detox", "toxic", 2).start(d -> {
            if (d.event().eventId().equals(poison)) {
                poisonAttempts.add(d.attempt());
                throw new IllegalStateException("cannot handle");
            }
            handled.add(d.event().eventId());
            return Ack.ok();
        });
        try {
            await().atMost(WAIT).until(() -> handled.size() == 17 && DeadLetters.of(store).count("detox") == 1);
            assertThat(poisonAttempts).containsExactly(0, 1, 2);
            assertThat(DeadLetters.of(store).list("detox", Long.MAX_VALUE, 5)).singleElement().satisfies(l -> {
                assertThat(l.eventId()).isEqualTo(poison);
                assertThat(l.reasonSummary()).isEqualTo("max retry attempts exceeded (3)");
                assertThat(l.attempts()).isEqualTo(3);
            });
            assertThat(w.stats().readerRestarts()).isZero();
        } finally {
            w.stop(Duration.ofSeconds(5));
        }
    }

    @Test
    void a_zombie_whose_renewals_are_blocked_keeps_handling_briefly_but_cannot_move_a_checkpoint() throws Exception {
        append("zomb", 8, 40);
        List<Instant> zombieDone = new CopyOnWriteArrayList<>();
        EventStore zombieStore = EventStore.builder(POSTGRES.newDataSource(6)).build();
        ShardedSubscription zombie = ShardedSubscription.builder(zombieStore, "zombies", Target.category("zomb"))
                .shards(1).leaseTtl(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(500))
                .start(d -> {
                    java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(20).toNanos()); // slow work
                    zombieDone.add(Instant.now());
                    return Ack.ok();
                });
        CountDownLatch never = new CountDownLatch(1);
        try (Connection blocker = POSTGRES.dataSource().getConnection()) {
            await().atMost(WAIT).until(() -> zombie.ownedBuckets().equals(Set.of(0)) && zombieDone.size() > 5);
            // Block the zombie's next heartbeat: its pass stalls and it stops renewing, while its
            // reader thread goes on handling events.
            blocker.setAutoCommit(false);
            try (PreparedStatement lock = blocker.prepareStatement(
                    "SELECT 1 FROM waymark.workers WHERE subscription = 'zombies' AND worker_id = ? FOR UPDATE")) {
                lock.setString(1, zombie.workerId());
                lock.executeQuery().close();
            }
            Instant blocked = Instant.now();
            // A second worker takes the bucket once the lease expires; its handler never finishes,
            // so any checkpoint movement from now on could only come from the zombie.
            ShardedSubscription taker = ShardedSubscription.builder(store, "zombies", Target.category("zomb"))
                    .shards(1).leaseTtl(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(500))
                    .start(d -> {
                        never.await();
                        return Ack.ok();
                    });
            try {
                await().atMost(WAIT).until(() -> taker.ownedBuckets().equals(Set.of(0)));
                Optional<GlobalPosition> atTakeover = Checkpoints.of(store).get("zombies", Partition.WHOLE);
                assertThat(zombieDone).as("the zombie kept handling after its renewals stopped")
                        .anyMatch(t -> t.isAfter(blocked.plusMillis(200)));
                assertThat(zombieDone.size()).as("the zombie did not drain everything").isLessThan(320);
                await("no checkpoint moves once the lease is gone").during(Duration.ofMillis(2500))
                        .atMost(WAIT).until(() -> Checkpoints.of(store).get("zombies", Partition.WHOLE)
                                .equals(atTakeover));
            } finally {
                never.countDown();
                taker.stop(Duration.ofSeconds(5));
            }
            blocker.rollback();
        } finally {
            zombie.stop(Duration.ofSeconds(5));
            zombieStore.close();
        }
    }
}
