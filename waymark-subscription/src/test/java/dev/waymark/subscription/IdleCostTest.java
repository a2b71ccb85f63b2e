package dev.waymark.subscription;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.HeadWatch;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.FailingDataSource;
import dev.waymark.testkit.PostgresExtension;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Idle costs nothing but one shared probe per fallback interval (issue 34): readers with nothing
 * to read send no query of their own, yet a lost notification still only delays them by the
 * fallback interval, and a burst after a long silence arrives whole and in order.
 */
class IdleCostTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Duration FALLBACK = Duration.ofMillis(500);
    /** Longer than any wait of these tests: only the store's fallback probe may find an event. */
    private static final Duration NO_POLL = Duration.ofHours(1);

    private static EventStore writer;

    @BeforeAll
    static void setUp() {
        writer = EventStore.builder(POSTGRES.newDataSource(4)).build();
    }

    @AfterAll
    static void tearDown() {
        writer.close();
    }

    @Test
    void a_reader_whose_notification_is_lost_still_delivers_within_the_fallback_interval() throws Exception {
        // the LISTEN connection, once terminated, stays down for a minute: no reconnect wakes anyone
        try (EventStore reader = EventStore.builder(POSTGRES.newDataSource(4)).fallbackPoll(FALLBACK)
                .reconnectBackoff(Duration.ofMinutes(1), Duration.ofMinutes(1)).build()) {
            Recorder recorder = Recorder.ok();
            try (Subscription s = Subscription.builder(reader, "lost", Target.category("lost")).pollInterval(NO_POLL)
                    .start(recorder)) {
                append("lost-1", "Before");
                await().atMost(Duration.ofSeconds(10)).until(() -> recorder.size() == 1);
                Integer pid = await().atMost(Duration.ofSeconds(10)).until(IdleCostTest::listenerPid, p -> p != null);

                terminate(pid);
                await().atMost(Duration.ofSeconds(10)).until(() -> listenerPid() == null);
                // two probes later the listener has run its heartbeat (every fallback interval) on the
                // dead connection, noticed the loss and gone to sleep for its minute of backoff
                awaitProbes(reader.headWatch(), 3);

                long appended = System.nanoTime();
                append("lost-1", "WhileDeaf"); // its NOTIFY reaches nobody
                await().atMost(Duration.ofSeconds(10)).until(() -> recorder.size() == 2);
                Duration took = Duration.ofNanos(System.nanoTime() - appended);

                assertThat(recorder.types()).containsExactly("Before", "WhileDeaf");
                assertThat(listenerPid()).as("still deaf: the delivery came from the fallback probe").isNull();
                // the fallback interval, plus a probe, a read and a machine shared with other builds
                assertThat(took).isLessThan(FALLBACK.plus(Duration.ofMillis(1500)));
            }
        }
    }

    @Test
    void a_burst_after_a_long_idle_period_is_delivered_whole_and_in_order() throws Exception {
        try (EventStore reader = EventStore.builder(POSTGRES.newDataSource(4)).fallbackPoll(Duration.ofMillis(100))
                .build()) {
            List<RecordedEvent> seen = new CopyOnWriteArrayList<>();
            try (Subscription s = Subscription.builder(reader, "burst", Target.category("burst")).pollInterval(NO_POLL)
                    .batchSize(50).start(d -> {
                        seen.add(d.event());
                        return Ack.ok();
                    })) {
                append("burst-0", "Warm");
                await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() == 1);
                // settled: a page read behind a probe taken before "Warm" was visible is followed by one more
                awaitProbes(reader.headWatch(), 2);
                long reads = reader.queryCount(QueryPurpose.READ);
                awaitProbes(reader.headWatch(), 20); // a long silence: twenty fallback probes
                assertThat(reader.queryCount(QueryPurpose.READ)).as("reads while idle").isEqualTo(reads);

                int streams = 8;
                int perStream = 40;
                ExecutorService appenders = Executors.newFixedThreadPool(4);
                try {
                    List<Future<?>> done = new ArrayList<>();
                    for (int t = 0; t < 4; t++) {
                        int first = t;
                        done.add(appenders.submit(() -> {
                            for (int v = 0; v < perStream; v++) {
                                for (int st = first; st < streams; st += 4) {
                                    writer.append("burst-s" + st, ExpectedVersion.any(),
                                            EventData.json("B", "{\"v\":" + v + "}"));
                                }
                            }
                        }));
                    }
                    for (Future<?> f : done) {
                        f.get(60, TimeUnit.SECONDS);
                    }
                } finally {
                    appenders.shutdownNow();
                }
                int total = 1 + streams * perStream;
                await().atMost(Duration.ofSeconds(30)).until(() -> seen.size() >= total);

                assertThat(seen).hasSize(total);
                assertThat(seen.stream().map(RecordedEvent::eventId).distinct().count()).isEqualTo(total);
                for (int i = 1; i < seen.size(); i++) {
                    assertThat(seen.get(i).position()).isGreaterThan(seen.get(i - 1).position());
                }
                for (int st = 0; st < streams; st++) {
                    String stream = "burst-s" + st;
                    assertThat(
                            seen.stream().filter(e -> e.streamName().equals(stream)).map(RecordedEvent::streamVersion))
                            .as(stream).containsExactlyElementsOf(versions(perStream));
                }
            }
        }
    }

    @Test
    void an_idle_reader_sleeps_through_probes_that_find_nothing_yet_stops_at_once() throws Exception {
        try (EventStore reader = EventStore.builder(POSTGRES.newDataSource(4)).fallbackPoll(Duration.ofMillis(50))
                .build()) {
            Recorder recorder = Recorder.ok();
            Subscription s = Subscription.builder(reader, "sleeper", Target.category("sleeper")).start(recorder);
            try {
                append("sleeper-1", "First");
                await().atMost(Duration.ofSeconds(10)).until(() -> recorder.size() == 1);
                Thread thread = await().atMost(Duration.ofSeconds(10)).until(() -> thread("waymark-sub-sleeper"),
                        t -> t != null && t.getState() == Thread.State.TIMED_WAITING);
                ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                long parks = threads.getThreadInfo(thread.threadId()).getWaitedCount();
                awaitProbes(reader.headWatch(), 20); // a second of probes, each finding the head where it was

                // before: the reader woke every 100 ms and on every probe, 20 and more times here
                assertThat(threads.getThreadInfo(thread.threadId()).getWaitedCount() - parks)
                        .as("wake-ups of the idle reader").isLessThanOrEqualTo(1);
                append("sleeper-1", "Second");
                await().atMost(Duration.ofSeconds(10)).until(() -> recorder.size() == 2);
                await().atMost(Duration.ofSeconds(10)).until(() -> thread.getState() == Thread.State.TIMED_WAITING);
            } finally {
                long stopping = System.nanoTime();
                assertThat(s.stop(Duration.ofSeconds(30))).isTrue();
                // asleep on the watch for up to a minute, it is woken by the stop, not by its grace running out
                assertThat(Duration.ofNanos(System.nanoTime() - stopping)).isLessThan(Duration.ofSeconds(5));
                assertThat(s.failure()).isEmpty();
            }
            assertThat(recorder.types()).containsExactly("First", "Second");
        }
    }

    @Test
    void idle_readers_send_no_query_but_the_shared_probe_and_one_lease_pass_per_pool() throws Exception {
        Duration renew = Duration.ofSeconds(1);
        try (EventStore store = EventStore.builder(POSTGRES.newDataSource(8)).fallbackPoll(Duration.ofMillis(200))
                .build()) {
            append("idle-1", "Seed");
            List<ShardedSubscription> pools = new ArrayList<>();
            List<RecordedEvent> seen = new CopyOnWriteArrayList<>();
            try (Subscription plain = Subscription.builder(store, "idle-plain", Target.category("idle"))
                    .start(d -> Ack.ok())) {
                for (int p = 0; p < 2; p++) {
                    pools.add(ShardedSubscription.builder(store, "idle-pool-" + p, Target.category("idle")).shards(16)
                            .leaseTtl(Duration.ofSeconds(5)).renewInterval(renew).start(d -> {
                                seen.add(d.event());
                                return Ack.ok();
                            }));
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> pools.stream()
                        .allMatch(pool -> pool.ownedBuckets().size() == 16) && seen.size() == 2);
                awaitProbes(store.headWatch(), 10); // every reader has read its first pages and waits

                Map<QueryPurpose, Long> before = counts(store);
                long started = System.nanoTime();
                long firstProbe = store.headWatch().latest().sequence();
                awaitProbes(store.headWatch(), 15); // three seconds of silence
                Map<QueryPurpose, Long> after = counts(store);
                double seconds = (System.nanoTime() - started) / 1e9;
                long probes = store.headWatch().latest().sequence() - firstProbe;

                // Before: each of the 33 readers probed, read its horizon and read a page on every
                // 200 ms tick, about 500 queries in these three seconds.
                assertThat(delta(before, after, QueryPurpose.READ)).as("page reads while idle").isZero();
                assertThat(delta(before, after, QueryPurpose.CHECKPOINT)).as("checkpoint writes while idle").isZero();
                assertThat(delta(before, after, QueryPurpose.PROBE)).as("probes while idle").isEqualTo(probes)
                        .isLessThanOrEqualTo((long) Math.ceil(seconds / 0.2) + 1);
                // the probe runs as the LISTEN connection's heartbeat: no separate SELECT 1 beside it
                assertThat(delta(before, after, QueryPurpose.NOTIFY)).as("heartbeats besides the probes").isZero();
                // one statement per pool per renew interval, whatever the number of buckets
                assertThat(delta(before, after, QueryPurpose.LEASE)).as("lease statements while idle")
                        .isLessThanOrEqualTo(2 * ((long) Math.ceil(seconds / renew.toMillis() * 1000) + 1));
                assertThat(seen).hasSize(2);
            } finally {
                pools.forEach(pool -> pool.stop(Duration.ofSeconds(5)));
            }
        }
    }

    @Test
    void idle_lease_passes_take_no_connection_from_the_pool_while_the_listen_connection_is_up() throws Exception {
        // HikariCP validates a connection idle for over 500 ms before it hands it out, with an empty
        // statement that the server counts as a transaction: one per pass and pool, before
        LongAdder passCheckouts = new LongAdder();
        Duration renew = Duration.ofMillis(500);
        try (HikariDataSource connections = POSTGRES.newDataSource(8);
                EventStore store = EventStore.builder(FailingDataSource.hooked(connections, () -> countPass(
                        passCheckouts))).fallbackPoll(Duration.ofMillis(200)).build()) {
            List<ShardedSubscription> pools = new ArrayList<>();
            try {
                for (int p = 0; p < 2; p++) {
                    pools.add(ShardedSubscription.builder(store, "lent-pool-" + p, Target.category("lent")).shards(4)
                            .leaseTtl(Duration.ofSeconds(5)).renewInterval(renew).start(d -> Ack.ok()));
                }
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> pools.stream().allMatch(pool -> pool.ownedBuckets().size() == 4));
                await().atMost(Duration.ofSeconds(10)).until(IdleCostTest::listenerPid, pid -> pid != null);
                awaitProbes(store.headWatch(), 5); // the LISTEN connection is up and lent between its waits

                long checkouts = passCheckouts.sum();
                long leases = store.queryCount(QueryPurpose.LEASE);
                // about four passes of each pool: a second and a half of renewals
                await().atMost(Duration.ofSeconds(30)).until(() -> store.queryCount(QueryPurpose.LEASE) >= leases + 6);

                assertThat(passCheckouts.sum() - checkouts).as("connections the passes took from the pool").isZero();
                assertThat(pools).allSatisfy(pool -> assertThat(pool.stats().losses()).isZero());
            } finally {
                pools.forEach(pool -> pool.stop(Duration.ofSeconds(5)));
            }
        }
    }

    @Test
    void lease_passes_go_to_the_pool_while_the_listen_connection_is_down_and_keep_every_bucket() throws Exception {
        LongAdder passCheckouts = new LongAdder();
        try (HikariDataSource connections = POSTGRES.newDataSource(4);
                EventStore store = EventStore.builder(FailingDataSource.hooked(connections, () -> countPass(
                        passCheckouts))).fallbackPoll(Duration.ofMillis(200))
                        .reconnectBackoff(Duration.ofMinutes(1), Duration.ofMinutes(1)).build()) {
            ShardedSubscription pool = ShardedSubscription.builder(store, "deaf-pool", Target.category("deaf"))
                    .shards(4).leaseTtl(Duration.ofSeconds(2)).renewInterval(Duration.ofMillis(500))
                    .start(d -> Ack.ok());
            try {
                await().atMost(Duration.ofSeconds(30)).until(() -> pool.ownedBuckets().size() == 4);
                Integer pid = await().atMost(Duration.ofSeconds(10)).until(IdleCostTest::listenerPid, p -> p != null);

                terminate(pid); // down for a minute: its reconnect backoff
                await().atMost(Duration.ofSeconds(10)).until(() -> listenerPid() == null);
                long checkouts = passCheckouts.sum();
                // ten renewals on pooled connections: two and a half lease TTLs
                await().atMost(Duration.ofSeconds(30)).until(() -> passCheckouts.sum() >= checkouts + 10);

                assertThat(listenerPid()).as("still down: the renewals ran on the pool").isNull();
                assertThat(pool.ownedBuckets()).hasSize(4);
                assertThat(pool.stats().losses()).as("buckets lost while the LISTEN connection was down").isZero();
            } finally {
                pool.stop(Duration.ofSeconds(5));
            }
        }
    }

    /** Counts a connection taken by a sharded pool's pass thread. */
    private static void countPass(LongAdder passCheckouts) {
        if (Thread.currentThread().getName().startsWith("waymark-shard-")) {
            passCheckouts.increment();
        }
    }

    private static Map<QueryPurpose, Long> counts(EventStore store) {
        Map<QueryPurpose, Long> counts = new EnumMap<>(QueryPurpose.class);
        for (QueryPurpose p : QueryPurpose.values()) {
            counts.put(p, store.queryCount(p));
        }
        return counts;
    }

    private static long delta(Map<QueryPurpose, Long> before, Map<QueryPurpose, Long> after, QueryPurpose p) {
        return after.get(p) - before.get(p);
    }

    private static List<Long> versions(int n) {
        List<Long> versions = new ArrayList<>();
        for (long v = 1; v <= n; v++) {
            versions.add(v);
        }
        return versions;
    }

    /** Waits until {@code count} more probes than now have been published. */
    private static void awaitProbes(HeadWatch watch, int count) {
        long target = watch.latest().sequence() + count;
        await().atMost(Duration.ofSeconds(60)).until(() -> watch.latest().sequence() >= target);
    }

    private static Thread thread(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst()
                .orElse(null);
    }

    private static void append(String stream, String type) {
        writer.append(stream, ExpectedVersion.any(), EventData.json(type, "{}"));
    }

    private static Integer listenerPid() throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pid FROM pg_stat_activity WHERE application_name ="
                        + " 'waymark-listener' AND datname = current_database() ORDER BY backend_start DESC LIMIT 1")) {
            return rs.next() ? rs.getInt(1) : null;
        }
    }

    private static void terminate(int pid) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(" + pid + ")");
        }
    }
}
