package dev.waymark.subscription.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.HeadWatch;
import dev.waymark.store.Partition;
import dev.waymark.store.QueryPurpose;
import dev.waymark.subscription.LeaseFence;
import dev.waymark.subscription.LeaseLostException;
import dev.waymark.subscription.SubscriptionConfigException;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.internal.CheckpointSql;
import dev.waymark.subscription.shard.internal.BucketReaders;
import dev.waymark.subscription.shard.internal.LeaseStore;
import dev.waymark.subscription.shard.internal.ReconcilePass;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.FailingDataSource;
import dev.waymark.testkit.ManualClock;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The reconcile pass against real lease rows, on the database clock moved by ageing the rows, and recording
 * readers instead of subscriptions.
 */
class ReconcilePassTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Duration TTL = Duration.ofSeconds(30);
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

    /** Readers that only record what the pass asked of them. */
    static final class FakeReaders implements BucketReaders {
        final Map<Integer, Long> running = new TreeMap<>();
        final Map<Integer, Boolean> dead = new HashMap<>();
        final List<String> log = new ArrayList<>();

        @Override
        public Set<Integer> running() {
            return Set.copyOf(running.keySet());
        }

        @Override
        public boolean isAlive(int bucket) {
            return running.containsKey(bucket) && !dead.getOrDefault(bucket, false);
        }

        @Override
        public Throwable deathCause(int bucket) {
            return dead.getOrDefault(bucket, false) ? new IllegalStateException("died") : null;
        }

        @Override
        public long epochOf(int bucket) {
            return running.getOrDefault(bucket, -1L);
        }

        @Override
        public void start(int bucket, long epoch) {
            running.put(bucket, epoch);
            dead.remove(bucket);
            log.add("start " + bucket);
        }

        /** Buckets whose reader ignores its stop (a stuck handler) until removed from here. */
        final Set<Integer> stuck = new HashSet<>();
        final Set<Integer> draining = new HashSet<>();

        @Override
        public boolean stop(int bucket) {
            if (running.remove(bucket) == null) {
                return !draining().contains(bucket);
            }
            log.add("stop " + bucket);
            if (stuck.contains(bucket)) {
                draining.add(bucket);
                return false;
            }
            return true;
        }

        @Override
        public Set<Integer> draining() {
            draining.retainAll(stuck);
            return Set.copyOf(draining);
        }
    }

    /** A worker under test: its lease store, its readers and its pass. */
    final class Worker {
        final String id;
        final LeaseStore leases;
        final FakeReaders readers = new FakeReaders();
        final List<String> events = new ArrayList<>();
        final ReconcilePass pass;

        Worker(String subscription, String id, int shards, LeaseTime clock, DataSource dataSource) {
            this(dataSource == null ? store : EventStore.builder(dataSource).build(), subscription, id, shards, clock);
        }

        Worker(EventStore handle, String subscription, String id, int shards, LeaseTime clock) {
            this.id = id;
            this.leases = new LeaseStore(handle, subscription, shards, TTL);
            clock.track(subscription);
            this.leases.ensureShards();
            this.pass = new ReconcilePass(leases, readers, id, shards, new ShardListener() {
                @Override
                public void claimed(String w, int bucket, long epoch) {
                    events.add("claim " + bucket + "@" + epoch);
                }

                @Override
                public void shed(String w, int bucket) {
                    events.add("shed " + bucket);
                }

                @Override
                public void lost(String w, int bucket) {
                    events.add("lost " + bucket);
                }

                @Override
                public void readerRestarted(String w, int bucket, Throwable cause) {
                    events.add("restart " + bucket);
                }

                @Override
                public void readerStuck(String w, int bucket) {
                    events.add("stuck " + bucket);
                }

                @Override
                public void passFailed(String w, String step, Throwable error) {
                    events.add("failed " + step);
                }
            });
        }

        Set<Integer> pass() {
            return pass.run();
        }
    }

    private static String fresh() {
        return "pool-" + names.incrementAndGet();
    }

    private static LeaseTime clock() {
        return new LeaseTime();
    }

    /**
     * Lease time stays the database's ({@code now()}); "advancing" it ages every lease and heartbeat
     * row of the pools it tracks by the same amount, which is what a later {@code now()} would see.
     */
    static final class LeaseTime {
        private final Set<String> pools = new HashSet<>();

        void track(String subscription) {
            pools.add(subscription);
        }

        void advance(Duration by) {
            String q = "\"" + store.schema() + "\".";
            String shift = " - ? * interval '1 millisecond'";
            try (Connection c = POSTGRES.dataSource().getConnection();
                    PreparedStatement shards = c.prepareStatement("UPDATE " + q + "shards SET lease_expires_at ="
                            + " lease_expires_at" + shift + ", heartbeat_at = heartbeat_at" + shift
                            + " WHERE subscription = ANY (?)");
                    PreparedStatement workers = c.prepareStatement("UPDATE " + q + "workers SET heartbeat_at ="
                            + " heartbeat_at" + shift + " WHERE subscription = ANY (?)")) {
                shards.setLong(1, by.toMillis());
                shards.setLong(2, by.toMillis());
                shards.setArray(3, c.createArrayOf("text", pools.toArray()));
                shards.executeUpdate();
                workers.setLong(1, by.toMillis());
                workers.setArray(2, c.createArrayOf("text", pools.toArray()));
                workers.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @Test
    void fair_share_is_the_ceiling_of_buckets_over_workers() {
        assertThat(ShardOptions.fairShare(6, 3)).isEqualTo(2);
        assertThat(ShardOptions.fairShare(6, 4)).isEqualTo(2);
        assertThat(ShardOptions.fairShare(7, 3)).isEqualTo(3);
        assertThat(ShardOptions.fairShare(4, 0)).isEqualTo(4);
        assertThat(ShardOptions.fairShare(16, 3)).isEqualTo(6);
    }

    @Test
    void a_lone_worker_claims_one_bucket_per_pass_until_it_holds_all_and_never_sheds() {
        LeaseTime clock = clock();
        Worker a = new Worker(fresh(), "a", 4, clock, null);
        for (int pass = 1; pass <= 4; pass++) {
            assertThat(a.pass()).hasSize(pass);
            clock.advance(Duration.ofSeconds(10));
        }
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 1, 2, 3);
        assertThat(a.readers.running()).containsExactlyInAnyOrder(0, 1, 2, 3);
        assertThat(a.events).containsExactly("claim 0@1", "claim 1@1", "claim 2@1", "claim 3@1");
    }

    @Test
    void cold_start_converges_to_an_even_split() {
        LeaseTime clock = clock();
        String pool = fresh();
        List<Worker> workers = List.of(new Worker(pool, "a", 16, clock, null), new Worker(pool, "b", 16, clock, null),
                new Worker(pool, "c", 16, clock, null));
        for (int round = 0; round < 12; round++) {
            workers.forEach(Worker::pass);
            clock.advance(Duration.ofSeconds(10));
        }
        List<Integer> counts = workers.stream().map(w -> w.readers.running().size()).toList();
        assertThat(counts.stream().mapToInt(Integer::intValue).sum()).isEqualTo(16);
        assertThat(counts.stream().mapToInt(Integer::intValue).max().getAsInt()
                - counts.stream().mapToInt(Integer::intValue).min().getAsInt()).isLessThanOrEqualTo(1);
        // every bucket is read by exactly one worker
        List<Integer> all = new ArrayList<>();
        workers.forEach(w -> all.addAll(w.readers.running()));
        assertThat(all).doesNotHaveDuplicates().hasSize(16);
    }

    @Test
    void a_joiner_makes_the_owner_shed_its_highest_buckets_after_stopping_their_readers() {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 4, clock, null);
        for (int i = 0; i < 4; i++) {
            a.pass();
        }
        Worker b = new Worker(pool, "b", 4, clock, null);
        assertThat(b.pass()).isEmpty(); // all owned; b is now a visible member
        a.readers.log.clear();
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 1);
        assertThat(a.events).contains("shed 3", "shed 2");
        assertThat(a.readers.log).containsExactlyInAnyOrder("stop 3", "stop 2");
        assertThat(b.pass()).containsExactly(2);
        assertThat(b.pass()).containsExactlyInAnyOrder(2, 3);
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 1);
    }

    @Test
    void a_bucket_whose_reader_does_not_stop_is_kept_and_another_is_shed_in_its_place() {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 4, clock, null);
        for (int i = 0; i < 4; i++) {
            a.pass();
        }
        a.readers.stuck.add(3); // bucket 3's handler ignores its interrupt
        Worker b = new Worker(pool, "b", 4, clock, null);
        assertThat(b.pass()).isEmpty();

        // before: a gave bucket 3 up although its reader was still mid-event, and b started on it
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 1, 3);
        assertThat(a.events).contains("shed 2", "stuck 3").doesNotContain("shed 3");
        assertThat(a.readers.running()).as("no second reader beside the stuck one").containsExactlyInAnyOrder(0, 1);
        assertThat(b.pass()).containsExactly(2);
        // the next pass sheds the highest bucket whose reader can stop
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 3);
        assertThat(a.events).contains("shed 1").doesNotContain("shed 3");
        assertThat(b.pass()).containsExactlyInAnyOrder(1, 2);
        for (int i = 0; i < 3; i++) { // past the lease's TTL: a's passes keep renewing the stuck bucket
            clock.advance(TTL.dividedBy(2));
            assertThat(a.pass()).containsExactlyInAnyOrder(0, 3);
            assertThat(b.pass()).containsExactlyInAnyOrder(1, 2);
        }
        assertThat(a.leases.snapshot().get(3).live()).isTrue();
        assertThat(a.events.stream().filter("stuck 3"::equals)).as("reported once").hasSize(1);
        assertThat(a.readers.running()).containsExactly(0);

        a.readers.stuck.remove(3); // the handler returns; the reader ends and a new one starts
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 3);
        assertThat(a.readers.running()).containsExactlyInAnyOrder(0, 3);
        assertThat(b.pass()).containsExactlyInAnyOrder(1, 2);
    }

    @Test
    void a_bucket_kept_for_its_stuck_reader_and_then_lost_is_reported_lost() {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 2, clock, null);
        a.pass();
        a.pass();
        a.readers.stuck.add(1);
        Worker b = new Worker(pool, "b", 2, clock, null);
        b.pass();
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 1); // 1 does not stop: kept
        assertThat(a.pass()).containsExactly(1); // 0 is shed in its place
        assertThat(b.pass()).containsExactly(0);
        clock.advance(TTL.plusSeconds(1)); // a stalls; b takes the expired bucket 1 (and renews 0)
        assertThat(b.leases.claim("b", 2)).extracting(LeaseStore.Lease::bucket).contains(1);
        // before: the bucket went from a's holdings without a word (its reader was not running)
        assertThat(a.pass()).isEmpty();
        assertThat(a.events).contains("lost 1");
    }

    @Test
    void leaving_releases_every_bucket_but_the_ones_kept() {
        LeaseTime clock = clock();
        Worker a = new Worker(fresh(), "a", 3, clock, null);
        for (int i = 0; i < 3; i++) {
            a.pass();
        }
        a.leases.leave("a", Set.of(1));
        assertThat(a.leases.snapshot()).extracting(o -> o.owner().orElse("-")).containsExactly("-", "a", "-");
        a.leases.leave("a", Set.of());
        assertThat(a.leases.snapshot()).extracting(o -> o.owner().orElse("-")).containsExactly("-", "-", "-");
    }

    @Test
    void a_lost_bucket_whose_reader_is_stuck_gets_no_second_reader_until_it_ends_when_reclaimed() {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 2, clock, null);
        a.pass();
        a.pass();
        Worker b = new Worker(pool, "b", 2, clock, null);
        b.pass();
        clock.advance(TTL.plusSeconds(1)); // a stalls; b takes bucket 0 at a new epoch
        assertThat(b.pass()).containsExactly(0);
        a.readers.stuck.add(0);
        assertThat(a.pass()).containsExactly(1);
        assertThat(a.events).contains("lost 0", "stuck 0");
        b.leases.leave("b", Set.of()); // b leaves; a claims bucket 0 again
        clock.advance(Duration.ofSeconds(1));
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 1);
        assertThat(a.readers.running()).as("not while the old reader runs").containsExactly(1);
        a.readers.stuck.remove(0);
        a.pass();
        assertThat(a.readers.running()).containsExactlyInAnyOrder(0, 1);
    }

    @Test
    void an_expired_lease_is_taken_over_at_a_new_epoch_and_the_old_owner_loses_its_reader() {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 2, clock, null);
        a.pass();
        a.pass();
        assertThat(a.readers.running()).containsExactlyInAnyOrder(0, 1);
        Worker b = new Worker(pool, "b", 2, clock, null);
        assertThat(b.pass()).isEmpty();

        clock.advance(TTL.plusSeconds(1)); // a stops renewing (crashed or stalled)
        assertThat(b.pass()).containsExactly(0);
        assertThat(b.events).containsExactly("claim 0@2");
        assertThat(b.readers.epochOf(0)).isEqualTo(2);

        // a comes back: its renewal returns only what nobody took
        assertThat(a.pass()).containsExactly(1);
        assertThat(a.events).contains("lost 0");
        assertThat(a.readers.running()).containsExactly(1);
    }

    @Test
    void renewals_batched_per_pool_still_fence_a_zombie() throws Exception {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 4, clock, null);
        for (int i = 0; i < 4; i++) {
            a.pass();
        }
        assertThat(a.readers.running()).containsExactlyInAnyOrder(0, 1, 2, 3);
        long statements = store.queryCount(QueryPurpose.LEASE);
        a.pass();
        assertThat(store.queryCount(QueryPurpose.LEASE) - statements)
                .as("lease statements of a pass holding its share: one, not one per bucket").isEqualTo(1);

        Worker b = new Worker(pool, "b", 4, clock, null);
        clock.advance(TTL.plusSeconds(1)); // a freezes: no renewal for longer than the lease
        for (int i = 0; i < 4; i++) {
            b.pass();
        }
        assertThat(b.readers.running()).containsExactlyInAnyOrder(0, 1, 2, 3);
        List<ShardOwnership> taken = b.leases.snapshot();
        assertThat(taken).allSatisfy(o -> {
            assertThat(o.owner()).contains("b");
            assertThat(o.epoch()).isEqualTo(2);
        });

        // a thaws: its one renewal statement renews nothing of b's, and its readers stop
        assertThat(a.pass()).isEmpty();
        assertThat(a.events).contains("lost 0", "lost 1", "lost 2", "lost 3");
        assertThat(a.readers.running()).isEmpty();
        assertThat(b.leases.snapshot()).as("b's leases, untouched by a's renewal").isEqualTo(taken);
        // and a checkpoint a's reader still had in flight, at the old epoch, moves nothing
        assertThatThrownBy(() -> saveCheckpoint(pool, 0, "a", 1)).isInstanceOf(LeaseLostException.class);
        saveCheckpoint(pool, 0, "b", 2);
    }

    @Test
    void renewals_on_the_listen_connection_still_fence_a_zombie() throws Exception {
        LeaseTime clock = clock();
        String pool = fresh();
        AtomicInteger checkouts = new AtomicInteger();
        Thread test = Thread.currentThread();
        try (HikariDataSource connections = POSTGRES.newDataSource(4);
                EventStore listening = EventStore.builder(FailingDataSource.hooked(connections, () -> {
                    if (Thread.currentThread() == test) {
                        checkouts.incrementAndGet();
                    }
                })).fallbackPoll(Duration.ofMillis(100)).build()) {
            HeadWatch watch = listening.headWatch(); // starts the LISTEN thread, whose heartbeat is the probe
            await().atMost(Duration.ofSeconds(30)).until(ReconcilePassTest::listening);
            long probes = watch.latest().sequence();
            await().atMost(Duration.ofSeconds(30)).until(() -> watch.latest().sequence() >= probes + 3);
            Worker a = new Worker(listening, pool, "a", 4, clock);
            for (int i = 0; i < 4; i++) {
                a.pass();
            }
            assertThat(a.readers.running()).containsExactlyInAnyOrder(0, 1, 2, 3);
            int before = checkouts.get();
            long statements = listening.queryCount(QueryPurpose.LEASE);
            a.pass();
            assertThat(listening.queryCount(QueryPurpose.LEASE) - statements).as("lease statements of the pass")
                    .isEqualTo(1);
            assertThat(checkouts.get() - before).as("connections the renewal took from the pool").isZero();

            Worker b = new Worker(pool, "b", 4, clock, null);
            clock.advance(TTL.plusSeconds(1)); // a freezes: no renewal for longer than the lease
            for (int i = 0; i < 4; i++) {
                b.pass();
            }
            List<ShardOwnership> taken = b.leases.snapshot();
            assertThat(taken).allSatisfy(o -> assertThat(o.owner()).contains("b"));

            // a thaws: its renewal on the LISTEN connection (still up) renews nothing of b's, and its readers stop
            assertThat(a.pass()).isEmpty();
            assertThat(a.events).contains("lost 0", "lost 1", "lost 2", "lost 3");
            assertThat(a.readers.running()).isEmpty();
            assertThat(b.leases.snapshot()).as("b's leases, untouched by a's renewal").isEqualTo(taken);
            assertThatThrownBy(() -> saveCheckpoint(pool, 0, "a", 1)).isInstanceOf(LeaseLostException.class);
            saveCheckpoint(pool, 0, "b", 2);
        }
    }

    /** Whether a LISTEN backend of a store handle is up in this test's database. */
    private static boolean listening() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement p = c
                        .prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name ="
                                + " 'waymark-listener' AND datname = current_database()");
                java.sql.ResultSet rs = p.executeQuery()) {
            rs.next();
            return rs.getInt(1) > 0;
        }
    }

    private static void saveCheckpoint(String pool, int bucket, String owner, long epoch) throws Exception {
        try (java.sql.Connection c = POSTGRES.dataSource().getConnection()) {
            new CheckpointSql("\"waymark\"").save(c, pool, Partition.of(bucket, 4), new GlobalPosition(1, 1),
                    new LeaseFence(pool, bucket, owner, epoch));
        }
    }

    @Test
    void relinquish_only_releases_rows_the_worker_still_owns() {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 2, clock, null);
        a.pass();
        a.pass();
        Worker b = new Worker(pool, "b", 2, clock, null);
        assertThat(b.leases.relinquish("b", List.of(0, 1))).isEmpty();
        assertThat(a.leases.relinquish("a", List.of(1))).containsExactly(1);
        assertThat(b.leases.claim("b", 5)).extracting(LeaseStore.Lease::bucket).containsExactly(1);
        assertThat(a.leases.snapshot()).extracting(o -> o.owner().orElse("-")).containsExactly("a", "b");
    }

    @Test
    void every_change_of_owner_increments_the_epoch() {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 1, clock, null);
        assertThat(a.leases.claim("a", 1)).containsExactly(new LeaseStore.Lease(0, 1));
        a.leases.relinquish("a", List.of(0));
        assertThat(a.leases.claim("b", 1)).containsExactly(new LeaseStore.Lease(0, 2));
        clock.advance(TTL.plusSeconds(1));
        assertThat(a.leases.claim("a", 1)).containsExactly(new LeaseStore.Lease(0, 3));
        assertThat(a.leases.renew("a")).containsExactly(new LeaseStore.Lease(0, 3));
        assertThat(a.leases.renew("b")).isEmpty();
    }

    @Test
    void a_dead_reader_is_restarted_on_the_next_pass() {
        LeaseTime clock = clock();
        Worker a = new Worker(fresh(), "a", 1, clock, null);
        a.pass();
        a.readers.dead.put(0, true);
        a.pass();
        assertThat(a.events).contains("restart 0");
        assertThat(a.readers.isAlive(0)).isTrue();
    }

    @Test
    void a_failing_acquire_keeps_the_current_readers() {
        LeaseTime clock = clock();
        String pool = fresh();
        var broken = POSTGRES.newDataSource(2);
        Worker a = new Worker(pool, "a", 2, clock, broken);
        a.pass();
        a.pass();
        assertThat(a.readers.running()).containsExactlyInAnyOrder(0, 1);
        broken.close(); // every statement now fails
        a.readers.log.clear();
        assertThat(a.pass()).containsExactlyInAnyOrder(0, 1);
        assertThat(a.events).contains("failed renew");
        assertThat(a.readers.log).isEmpty();
    }

    @Test
    void the_row_of_a_worker_silent_for_ten_lease_ttls_is_deleted_by_a_live_worker() throws Exception {
        LeaseTime clock = clock();
        String pool = fresh();
        Worker a = new Worker(pool, "a", 2, clock, null);
        Worker b = new Worker(pool, "b", 2, clock, null);
        a.pass();
        b.pass(); // then b crashes: it never passes again, and never leaves
        // lease time is the database's, moved on by ageing rows: real time passes too, so "silent for
        // exactly ten TTLs" is a few milliseconds more, and the last silence checked is just below it
        for (Duration silent = Duration.ZERO; silent.compareTo(TTL.multipliedBy(10)) < 0; silent = silent
                .plusSeconds(10)) {
            assertThat(workerRows(pool)).as("b silent for %s", silent).containsExactlyInAnyOrder("a", "b");
            clock.advance(Duration.ofSeconds(10));
            a.pass();
        }
        // before: b's row stayed for ever, and every pass of every worker read it again
        assertThat(workerRows(pool)).containsExactly("a");
        assertThat(a.readers.running()).containsExactlyInAnyOrder(0, 1); // b's bucket taken over
    }

    private static List<String> workerRows(String subscription) throws java.sql.SQLException {
        try (java.sql.Connection c = POSTGRES.dataSource().getConnection();
                java.sql.PreparedStatement p = c.prepareStatement(
                        "SELECT worker_id FROM waymark.workers WHERE subscription = ? ORDER BY worker_id")) {
            p.setString(1, subscription);
            List<String> ids = new ArrayList<>();
            try (java.sql.ResultSet rs = p.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getString(1));
                }
            }
            return ids;
        }
    }

    @Test
    void a_different_shard_count_for_an_existing_subscription_is_refused_with_how_to_resize() {
        LeaseTime clock = clock();
        String pool = fresh();
        new Worker(pool, "a", 4, clock, null);
        assertThatThrownBy(() -> new Worker(pool, "b", 6, clock, null))
                .isInstanceOf(ShardCountMismatchException.class)
                .hasMessageContaining("started with 6 shards but is stored with 4,")
                .hasMessageContaining("To resize");
    }

    @Test
    void each_invalid_option_has_its_own_message() {
        Target t = Target.category("orders");
        Duration s = Duration.ofSeconds(1);
        assertThatThrownBy(() -> new ShardOptions(t, 0, s.multipliedBy(3), s, 1, RetryPolicy.fixed(1, s)))
                .isInstanceOf(SubscriptionConfigException.class).hasMessage("shardCount must be >= 1, got 0");
        assertThatThrownBy(() -> new ShardOptions(t, 1, Duration.ZERO, s, 1, RetryPolicy.fixed(1, s)))
                .hasMessageContaining("leaseTtl must be > 0");
        assertThatThrownBy(() -> new ShardOptions(t, 1, s.multipliedBy(3), Duration.ZERO, 1, RetryPolicy.fixed(1, s)))
                .hasMessageContaining("renewInterval must be > 0");
        assertThatThrownBy(() -> new ShardOptions(t, 1, s, s, 1, RetryPolicy.fixed(1, s)))
                .hasMessageContaining("must be shorter than leaseTtl");
        assertThatThrownBy(() -> new ShardOptions(t, 1, s.multipliedBy(3), s, 0, RetryPolicy.fixed(1, s)))
                .hasMessage("batchSize must be between 1 and 10000, got 0");
        // a bucket's reader is a plain subscription: a larger batch would pass here and fail every pass
        assertThatThrownBy(() -> new ShardOptions(t, 1, s.multipliedBy(3), s, 10_001, RetryPolicy.fixed(1, s)))
                .hasMessage("batchSize must be between 1 and 10000, got 10001");
        assertThatThrownBy(() -> new ShardOptions(t, 1, s.multipliedBy(3), s, 1, null))
                .hasMessageContaining("retry must not be null");
    }
}
