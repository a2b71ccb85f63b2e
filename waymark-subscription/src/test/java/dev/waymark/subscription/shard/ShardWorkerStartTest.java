package dev.waymark.subscription.shard;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.StoreUnavailableException;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/** A worker started while the database is unreachable reports it and joins the pool once it is back. */
class ShardWorkerStartTest {

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

    /** A step failure heard by a listener. */
    private record Failure(String step, Throwable error) {}

    /**
     * The test database behind a switch: while {@code down} is set, connections go to a port nobody
     * listens on (the driver's own "connection refused"); else to the real pool.
     */
    private static DataSource switchable(AtomicReference<Boolean> down) throws Exception {
        PGSimpleDataSource unreachable = new PGSimpleDataSource();
        unreachable.setUrl(POSTGRES.jdbcUrl());
        try (ServerSocket s = new ServerSocket(0)) {
            unreachable.setPortNumbers(new int[]{s.getLocalPort()}); // closed again below
        }
        DataSource real = POSTGRES.dataSource();
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    try {
                        return method.invoke(down.get() ? unreachable : real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static ShardListener recording(List<Failure> failures) {
        return new ShardListener() {
            @Override
            public void passFailed(String workerId, String step, Throwable error) {
                failures.add(new Failure(step, error));
            }
        };
    }

    @Test
    void a_worker_started_while_the_database_is_unavailable_reports_it_and_joins_once_it_is_back() throws Exception {
        for (int s = 0; s < 6; s++) {
            store.append("blip-" + s, ExpectedVersion.any(), EventData.json("E", "{}"));
        }
        AtomicReference<Boolean> down = new AtomicReference<>(true);
        List<Failure> failures = new CopyOnWriteArrayList<>();
        Set<UUID> handled = ConcurrentHashMap.newKeySet();
        try (EventStore flaky = EventStore.builder(switchable(down)).build()) {
            // before: start() threw the store's StoreUnavailableException and no listener heard of it
            ShardedSubscription worker = ShardedSubscription.builder(flaky, "blipper", Target.category("blip"))
                    .shards(2).leaseTtl(Duration.ofSeconds(3)).renewInterval(Duration.ofMillis(300))
                    .listener(recording(failures))
                    .start(d -> {
                        handled.add(d.event().eventId());
                        return Ack.ok();
                    });
            try {
                assertThat(failures).first().satisfies(f -> {
                    assertThat(f.step()).isEqualTo("ensure shards");
                    assertThat(f.error()).isInstanceOf(StoreUnavailableException.class);
                });
                // the passes retry it, and claim nothing while the rows cannot be created
                await().atMost(WAIT).until(() -> failures.stream().filter(f -> f.step().equals("ensure shards"))
                        .count() >= 3);
                assertThat(worker.isRunning()).isTrue();
                assertThat(worker.ownedBuckets()).isEmpty();

                down.set(false); // the database is back
                await().atMost(WAIT).until(() -> handled.size() == 6 && worker.ownedBuckets().equals(Set.of(0, 1)));
                assertThat(ShardedSubscription.ownership(store, "blipper")).hasSize(2);
            } finally {
                worker.stop(Duration.ofSeconds(5));
            }
        }
    }

    @Test
    void a_different_shard_count_still_fails_at_start_and_stops_a_worker_that_finds_it_once_the_database_is_back()
            throws Exception {
        ShardedSubscription.builder(store, "counted", Target.category("counted")).shards(3)
                .start(d -> Ack.ok()).stop(Duration.ofSeconds(5));
        assertThatThrownBy(() -> ShardedSubscription.builder(store, "counted", Target.category("counted")).shards(2)
                .start(d -> Ack.ok()))
                .isInstanceOf(ShardCountMismatchException.class)
                .hasMessageContaining("started with 2 shards but is stored with 3,");

        AtomicReference<Boolean> down = new AtomicReference<>(true);
        List<Failure> failures = new CopyOnWriteArrayList<>();
        try (EventStore flaky = EventStore.builder(switchable(down)).build()) {
            ShardedSubscription worker = ShardedSubscription.builder(flaky, "counted", Target.category("counted"))
                    .shards(2).leaseTtl(Duration.ofSeconds(3)).renewInterval(Duration.ofMillis(300))
                    .listener(recording(failures))
                    .start(d -> Ack.ok());
            try {
                assertThat(worker.isRunning()).isTrue();
                down.set(false);
                await().atMost(WAIT).until(() -> !worker.isRunning());
                assertThat(failures).last().satisfies(f -> {
                    assertThat(f.step()).isEqualTo("ensure shards");
                    assertThat(f.error()).isInstanceOf(ShardCountMismatchException.class);
                });
                assertThat(ShardedSubscription.ownership(store, "counted")).hasSize(3)
                        .allSatisfy(o -> assertThat(o.owner()).isEmpty());
            } finally {
                worker.stop(Duration.ofSeconds(5));
            }
        }
    }

    @Test
    void a_refused_shard_count_leaves_no_rows_names_only_the_stored_count_and_the_procedure() throws Exception {
        try (Connection other = POSTGRES.dataSource().getConnection(); Statement s = other.createStatement()) {
            other.setAutoCommit(false);
            // another worker's start with 8 shards, not committed yet
            s.execute("INSERT INTO waymark.shards (subscription, bucket, shard_count)"
                    + " SELECT 'eight', g, 8 FROM generate_series(0, 7) g");
            CompletableFuture<ShardedSubscription> sixteen = CompletableFuture.supplyAsync(() -> ShardedSubscription
                    .builder(store, "eight", Target.category("eight")).shards(16).start(d -> Ack.ok()));
            await("the start of 16 waits for the rows of 8").atMost(WAIT).until(() -> waitingForLocks() > 0);
            other.commit();
            // before: "stored with [8, 16]", counting the refused start's own rows
            assertThat(sixteen).failsWithin(WAIT).withThrowableOfType(ExecutionException.class).havingCause()
                    .isInstanceOfSatisfying(ShardCountMismatchException.class, e -> {
                        assertThat(e.configured()).isEqualTo(16);
                        assertThat(e.stored()).containsExactly(8);
                        assertThat(e).hasMessageContaining("started with 16 shards but is stored with 8,")
                                .hasMessageNotContaining("16]")
                                .hasMessageContaining("docs/OPERATIONS.md, \"Resizing\"")
                                .hasMessageContaining("`waymark shards status --subscription eight`")
                                .hasMessageContaining("DELETE FROM waymark.shards WHERE subscription = 'eight'")
                                .hasMessageContaining("start every worker with shards(16)");
                    });
        }
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*), min(shard_count), max(shard_count) FROM waymark.shards"
                        + " WHERE subscription = 'eight'")) {
            rs.next();
            assertThat(List.of(rs.getInt(1), rs.getInt(2), rs.getInt(3))).containsExactly(8, 8, 8);
        }
    }

    private static int waitingForLocks() throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        + " AND wait_event_type = 'Lock'")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
