package dev.waymark.store.plumbing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.StoreConfigException;
import dev.waymark.store.StoreException;
import dev.waymark.store.StoreUnavailableException;
import dev.waymark.store.TransientStoreException;
import dev.waymark.store.StoreFixture;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The transactions Waymark opens for its own work are bounded by the server (DESIGN decision 8):
 * one paused past the bound is ended and commits nothing, a lock wait ends at the bound, the
 * settings hold for that transaction only, and the application's own transactions are not bounded.
 */
class TransactionBoundsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final Duration BOUND = Duration.ofMillis(500);

    private static HikariDataSource single;
    private static EventStore store;

    @BeforeAll
    static void setUp() throws Exception {
        single = POSTGRES.newDataSource(1); // one connection: the next transaction reuses it
        store = EventStore.builder(single).internalTransactionTimeout(BOUND).build();
        POSTGRES.execute("CREATE TABLE marks (id int PRIMARY KEY)");
    }

    @AfterAll
    static void tearDown() {
        store.close();
        single.close();
    }

    private static long marks(int id) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM marks WHERE id = " + id)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String setting(Connection c, String name) throws java.sql.SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW " + name)) {
            rs.next();
            return rs.getString(1);
        }
    }

    @Test
    void a_transaction_paused_past_the_bound_is_ended_by_the_server_and_commits_nothing() throws Exception {
        assertThatThrownBy(() -> Jdbc.inTransaction(store, "mark 1", c -> {
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO marks VALUES (1)"); // holds a transaction id from here
            }
            try {
                Thread.sleep(BOUND.multipliedBy(3).toMillis()); // the process "freezes" inside its transaction
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return null;
        })).isInstanceOfSatisfying(StoreUnavailableException.class, e -> {
            assertThat(e.isRetryable()).isTrue();
            assertThat(e).hasMessageContaining("mark 1 failed")
                    .hasMessageContaining("idle_in_transaction_session_timeout")
                    .hasMessageContaining("internal transaction timeout is 500 ms");
        });
        assertThat(marks(1)).isZero();
        // the pool replaced the connection the server ended
        String version = Jdbc.inTransaction(store, "read", c -> setting(c, "server_version"));
        assertThat(version).isNotBlank();
    }

    @Test
    void the_bounds_hold_for_that_transaction_only_and_a_lock_wait_ends_at_the_bound() throws Exception {
        List<String> inside = Jdbc.inTransaction(store, "show", c -> List.of(setting(c,
                "idle_in_transaction_session_timeout"), setting(c, "lock_timeout"), setting(c, "statement_timeout")));
        assertThat(inside).containsExactly("500ms", "500ms", "500ms");
        try (Connection c = single.getConnection()) { // the same connection, after that transaction
            assertThat(List.of(setting(c, "idle_in_transaction_session_timeout"), setting(c, "lock_timeout"),
                    setting(c, "statement_timeout"))).containsExactly("0", "0", "0");
        }

        try (Connection holder = POSTGRES.dataSource().getConnection(); Statement s = holder.createStatement()) {
            s.execute("INSERT INTO marks VALUES (2)");
            holder.setAutoCommit(false);
            s.execute("SELECT * FROM marks WHERE id = 2 FOR UPDATE"); // held, unbounded, by "someone else"
            long started = System.nanoTime();
            assertThatThrownBy(() -> Jdbc.inTransaction(store, "delete mark 2", c -> {
                try (Statement d = c.createStatement()) {
                    return d.executeUpdate("DELETE FROM marks WHERE id = 2");
                }
            })).isInstanceOfSatisfying(StoreException.class, e -> {
                assertThat(e.isRetryable()).isTrue();
                assertThat(e).isInstanceOfAny(TransientStoreException.class, StoreUnavailableException.class)
                        .hasMessageContaining("delete mark 2 failed").hasMessageContaining("500 ms");
            });
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(BOUND.multipliedBy(4));
            holder.rollback();
        }
        assertThat(marks(2)).isEqualTo(1);
    }

    @Test
    void the_applications_own_transaction_is_not_bounded() throws Exception {
        String stream = store.inTransaction(tx -> {
            tx.append("long-1", ExpectedVersion.noStream(), List.of(EventData.json("E", "{}")));
            Thread.sleep(BOUND.multipliedBy(3).toMillis()); // a long application transaction
            return "long-1";
        });
        assertThat(store.streamInfo(stream)).isPresent();
    }

    @Test
    void the_bound_is_validated() {
        for (Duration bad : new Duration[]{null, Duration.ofMillis(99), Duration.ofHours(1).plusMillis(1)}) {
            assertThatThrownBy(() -> EventStore.builder(single).internalTransactionTimeout(bad).build())
                    .isInstanceOf(StoreConfigException.class)
                    .hasMessageContaining("internalTransactionTimeout must be between 100 ms and 3600000 ms");
        }
        assertThat(TransactionBounds.of(store)).isEqualTo(new TransactionBounds(BOUND));
    }
}
