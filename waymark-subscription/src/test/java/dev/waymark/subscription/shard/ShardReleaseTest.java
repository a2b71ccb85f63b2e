package dev.waymark.subscription.shard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ShardedSubscription#release} (what {@code waymark shards release --force} calls) against
 * lease rows another transaction holds locked: it waits a bounded time, applies nothing, leaves
 * no row locked, and fails with a typed error naming the pool, the worker and the bound.
 */
class ShardReleaseTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Duration BOUND = Duration.ofSeconds(1);
    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).internalTransactionTimeout(BOUND).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    /** Creates the pool's 4 bucket rows and gives them all to {@code worker}, leased for an hour. */
    private static void ownedBy(String pool, String worker) throws SQLException {
        ShardedSubscription.builder(store, pool, Target.category(pool)).shards(4).start(d -> Ack.ok())
                .stop(Duration.ofSeconds(5));
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement p = c.prepareStatement("UPDATE waymark.shards SET owner = ?, epoch = epoch + 1,"
                        + " lease_expires_at = now() + interval '1 hour' WHERE subscription = ?");
                PreparedStatement w = c.prepareStatement("INSERT INTO waymark.workers (subscription, worker_id,"
                        + " heartbeat_at) VALUES (?, ?, now())")) {
            p.setString(1, worker);
            p.setString(2, pool);
            p.executeUpdate();
            w.setString(1, pool);
            w.setString(2, worker);
            w.executeUpdate();
        }
    }

    private static List<String> owners(String pool) throws SQLException {
        List<String> owners = new ArrayList<>();
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT coalesce(owner, '-') FROM waymark.shards WHERE subscription = '"
                        + pool + "' ORDER BY bucket")) {
            while (rs.next()) {
                owners.add(rs.getString(1));
            }
        }
        return owners;
    }

    /** Whether every lease row of the pool can be locked now (no transaction holds one). */
    private static boolean unlocked(String pool) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT 1 FROM waymark.shards WHERE subscription = '" + pool + "' FOR UPDATE NOWAIT")
                        .close();
                return true;
            } catch (SQLException e) {
                if ("55P03".equals(e.getSQLState())) {
                    return false;
                }
                throw e;
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
    }

    @Test
    void a_release_blocked_by_a_locked_lease_row_times_out_applies_nothing_and_names_the_pool_worker_and_bound()
            throws Exception {
        ownedBy("rel", "w-frozen");
        try (Connection holder = POSTGRES.dataSource().getConnection(); Statement s = holder.createStatement()) {
            holder.setAutoCommit(false);
            // what a worker frozen in its checkpoint transaction held before: a lease row locked, unbounded
            s.executeQuery("SELECT 1 FROM waymark.shards WHERE subscription = 'rel' AND bucket = 2 FOR SHARE").close();

            long started = System.nanoTime();
            CompletableFuture<List<Integer>> release = CompletableFuture.supplyAsync(
                    () -> ShardedSubscription.release(store, "rel", "w-frozen"));
            // before: the release waited for the lock for ever, holding buckets 0 and 1 locked meanwhile
            Throwable failure = null;
            try {
                release.get(BOUND.plusSeconds(5).toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                failure = e.getCause();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BOUND.plusSeconds(2));
            assertThat(failure).isInstanceOfSatisfying(ShardReleaseTimeoutException.class, e -> {
                assertThat(e.pool()).isEqualTo("rel");
                assertThat(e.workerId()).isEqualTo("w-frozen");
                assertThat(e.bound()).isEqualTo(BOUND);
                assertThat(e.isRetryable()).isTrue();
                assertThat(e).hasMessageContaining("worker w-frozen").hasMessageContaining("sharded pool 'rel'")
                        .hasMessageContaining("1000 ms").hasMessageContaining("nothing was released");
            });
            // all or nothing: no bucket released, the worker still a member, and no row left locked
            assertThat(owners("rel")).containsExactly("w-frozen", "w-frozen", "w-frozen", "w-frozen");
            holder.rollback();
        }
        assertThat(unlocked("rel")).isTrue();
        assertThat(ShardedSubscription.release(store, "rel", "w-frozen")).containsExactly(0, 1, 2, 3);
        assertThat(owners("rel")).containsExactly("-", "-", "-", "-");
    }
}
