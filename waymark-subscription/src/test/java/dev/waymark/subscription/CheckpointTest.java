package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class CheckpointTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static Checkpoints checkpoints;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        checkpoints = Checkpoints.of(store);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static GlobalPosition at(long tx, long seq) {
        return new GlobalPosition(tx, seq);
    }

    @Test
    void a_checkpoint_never_moves_backwards() {
        assertThat(checkpoints.save("mono", Partition.WHOLE, at(100, 20))).isTrue();
        assertThat(checkpoints.save("mono", Partition.WHOLE, at(100, 5))).isFalse();
        assertThat(checkpoints.save("mono", Partition.WHOLE, at(99, 500))).isFalse();
        assertThat(checkpoints.get("mono", Partition.WHOLE)).contains(at(100, 20));
        assertThat(checkpoints.save("mono", Partition.WHOLE, at(101, 1))).isTrue();
        assertThat(checkpoints.get("mono", Partition.WHOLE)).contains(at(101, 1));
    }

    @Test
    void concurrent_stale_writers_cannot_regress_it() throws Exception {
        int writers = 8;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            CyclicBarrier barrier = new CyclicBarrier(writers);
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                futures.add(pool.submit(() -> {
                    barrier.await(10, TimeUnit.SECONDS);
                    for (int i = 0; i < 50; i++) {
                        // even writers go forward, odd ones keep writing old positions
                        long seq = writer % 2 == 0 ? writer * 1000L + i : i;
                        checkpoints.save("race", Partition.WHOLE, at(1, seq));
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(checkpoints.get("race", Partition.WHOLE)).contains(at(1, 6049));
    }

    @Test
    void an_operator_reset_moves_every_member_even_backwards() {
        checkpoints.save("resettable", Partition.of(0, 2), at(50, 1));
        checkpoints.save("resettable", Partition.of(1, 2), at(60, 1));
        assertThat(checkpoints.reset("resettable", at(10, 1))).isEqualTo(2);
        assertThat(checkpoints.get("resettable", Partition.of(0, 2))).contains(at(10, 1));
        assertThat(checkpoints.get("resettable", Partition.of(1, 2))).contains(at(10, 1));
        assertThat(checkpoints.reset("nobody", at(10, 1))).isZero();
        checkpoints.reset("resettable", Partition.of(1, 2), GlobalPosition.START);
        assertThat(checkpoints.get("resettable", Partition.of(1, 2))).contains(GlobalPosition.START);
    }

    private static void lease(String subscription, int bucket, String owner, long epoch, String expiresIn)
            throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement p = c.prepareStatement("INSERT INTO waymark.shards (subscription, bucket,"
                        + " shard_count, owner, epoch, lease_expires_at) VALUES (?, ?, 4, ?, ?, now() + ?::interval)"
                        + " ON CONFLICT (subscription, bucket) DO UPDATE SET owner = EXCLUDED.owner,"
                        + " epoch = EXCLUDED.epoch, lease_expires_at = EXCLUDED.lease_expires_at")) {
            p.setString(1, subscription);
            p.setInt(2, bucket);
            p.setString(3, owner);
            p.setLong(4, epoch);
            p.setString(5, expiresIn);
            p.executeUpdate();
        }
    }

    @Test
    void a_fenced_write_needs_the_current_owner_epoch_and_an_unexpired_lease() throws SQLException {
        Partition bucket = Partition.of(1, 4);
        lease("fenced", 1, "worker-a", 7, "30 seconds");
        LeaseFence holder = new LeaseFence("fenced", 1, "worker-a", 7);
        assertThat(checkpoints.save("fenced", bucket, at(5, 5), holder)).isTrue();

        lease("fenced", 1, "worker-b", 8, "30 seconds"); // taken over
        assertThatThrownBy(() -> checkpoints.save("fenced", bucket, at(6, 6), holder))
                .isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("worker-a").hasMessageContaining("epoch 7");
        assertThat(checkpoints.get("fenced", bucket)).contains(at(5, 5));

        lease("fenced", 1, "worker-b", 8, "-1 seconds"); // expired by the database clock
        assertThatThrownBy(
                () -> checkpoints.save("fenced", bucket, at(6, 6), new LeaseFence("fenced", 1, "worker-b", 8)))
                .isInstanceOf(LeaseLostException.class);
        assertThatThrownBy(
                () -> checkpoints.save("fenced", bucket, at(6, 6), new LeaseFence("fenced", 3, "worker-b", 8)))
                .isInstanceOf(LeaseLostException.class);
        assertThat(checkpoints.get("fenced", bucket)).contains(at(5, 5));
    }

    @Test
    void a_dead_letter_and_its_checkpoint_move_together_or_not_at_all() throws Exception {
        append(store, "atomic-1", "Poison");
        Partition bucket = Partition.of(2, 4);
        lease("atomic", 2, "worker-b", 3, "30 seconds");
        // The writer holds an outdated epoch, so the transaction that records the dead letter fails
        // at its checkpoint write: neither the dead letter nor the checkpoint may remain.
        Subscription zombie = Subscription.builder(store, "atomic", Target.category("atomic"))
                .fence(new LeaseFence("atomic", 2, "worker-b", 2))
                .startFrom(StartPosition.after(GlobalPosition.START))
                .start(d -> Ack.deadLetter(DeadLetterReason.poison("bad")));
        assertThat(zombie.awaitTermination(Duration.ofSeconds(15))).isTrue();
        assertThat(zombie.failure()).containsInstanceOf(LeaseLostException.class);
        assertThat(DeadLetters.of(store).count("atomic")).isZero();
        assertThat(checkpoints.get("atomic", Partition.WHOLE)).isEmpty();
        assertThat(checkpoints.get("atomic", bucket)).isEmpty();

        // The lease holder records both.
        Subscription holder = Subscription.builder(store, "atomic", Target.category("atomic"))
                .fence(new LeaseFence("atomic", 2, "worker-b", 3))
                .startFrom(StartPosition.after(GlobalPosition.START))
                .start(d -> Ack.deadLetter(DeadLetterReason.poison("bad")));
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(15))
                .until(() -> DeadLetters.of(store).count("atomic") == 1);
        holder.stop(Duration.ofSeconds(5));
        assertThat(checkpoints.get("atomic", Partition.WHOLE))
                .contains(store.readStreamForward("atomic-1", 0, 1).get(0).position());
    }

    @Test
    void a_null_member_position_or_target_is_refused_by_name() {
        // before: NullPointerExceptions from the SQL layer, and a null target measured every stream
        assertThatThrownBy(() -> checkpoints.get("nulls", null))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("member must not be null");
        assertThatThrownBy(() -> checkpoints.save("nulls", null, at(1, 1)))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("member must not be null");
        assertThatThrownBy(() -> checkpoints.save("nulls", Partition.WHOLE, null))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("position must not be null");
        assertThatThrownBy(() -> checkpoints.reset("nulls", null))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("position must not be null");
        assertThatThrownBy(() -> checkpoints.reset("nulls", null, at(1, 1)))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("member must not be null");
        assertThatThrownBy(() -> checkpoints.reset("nulls", Partition.WHOLE, null))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("position must not be null");
        assertThat(checkpoints.list("nulls")).isEmpty();
        assertThatThrownBy(() -> SubscriptionLag.measure(store, "nulls", null, Partition.WHOLE))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("target must not be null");
        assertThatThrownBy(() -> SubscriptionLag.measure(store, "nulls", Target.all(), null))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("member must not be null");
        assertThatThrownBy(() -> new SubscriptionConfig("nulls", Target.all(), Partition.WHOLE, null,
                StartPosition.checkpointOrBeginning(), 1, SubscriptionBuilder.DEFAULT_RETRY,
                CheckpointPolicy.defaults(),
                Duration.ofSeconds(1), null))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("eventTypes must not be null");
    }

    @Test
    void lag_counts_visible_events_after_the_checkpoint() {
        append(store, "lagging-1", "A", "B", "C");
        SubscriptionLag before = SubscriptionLag.measure(store, "lagger", Target.category("lagging"), Partition.WHOLE);
        assertThat(before.eventsBehind()).isEqualTo(3);
        assertThat(before.checkpoint()).isEqualTo(GlobalPosition.START);
        checkpoints.save("lagger", Partition.WHOLE, store.readStreamForward("lagging-1", 0, 2).get(1).position());
        SubscriptionLag after = SubscriptionLag.measure(store, "lagger", Target.category("lagging"), Partition.WHOLE);
        assertThat(after.eventsBehind()).isOne();
        assertThat(after.horizon().hiddenEvents()).isZero();
    }
}
