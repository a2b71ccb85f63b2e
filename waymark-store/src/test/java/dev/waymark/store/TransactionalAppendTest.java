package dev.waymark.store;

import static dev.waymark.store.StoreFixture.count;
import static dev.waymark.store.StoreFixture.event;
import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.testkit.PostgresExtension;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Appends that commit or roll back together with the application's own SQL. */
class TransactionalAppendTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() throws SQLException {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE orders (id text PRIMARY KEY, total int)");
        }
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static void insertOrder(Connection c, String id) throws SQLException {
        try (PreparedStatement p = c.prepareStatement("INSERT INTO orders VALUES (?, 10)")) {
            p.setString(1, id);
            p.executeUpdate();
        }
    }

    private static long orders(String id) {
        return count(POSTGRES.dataSource(), "SELECT count(*) FROM orders WHERE id = '" + id + "'");
    }

    @Test
    void append_on_the_callers_connection_commits_with_application_writes() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            store.append(c, "order-a", ExpectedVersion.noStream(), events(2));
            insertOrder(c, "a");
            c.commit();
        }
        assertThat(orders("a")).isOne();
        assertThat(store.readStreamForward("order-a", 0, 10)).hasSize(2);
    }

    @Test
    void rolling_back_the_callers_transaction_removes_events_and_application_writes() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            store.append(c, "order-b", ExpectedVersion.noStream(), events(2));
            insertOrder(c, "b");
            c.rollback();
        }
        assertThat(orders("b")).isZero();
        assertThat(store.streamInfo("order-b")).isEmpty();
    }

    @Test
    void an_append_after_another_write_in_the_transaction_is_refused() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            insertOrder(c, "c");
            assertThatThrownBy(() -> store.append(c, "order-c", ExpectedVersion.any(), events(1)))
                    .isInstanceOf(AppendRefusedException.class)
                    .hasMessageContaining("already has transaction id")
                    .hasMessageContaining("did not lock stream 'order-c' before it got it")
                    .hasMessageContaining("Remedy: append before any such statement");
            c.rollback();
        }
        assertThat(store.streamInfo("order-c")).isEmpty();
    }

    @Test
    void an_append_at_repeatable_read_is_refused() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            assertThatThrownBy(() -> store.append(c, "order-rr", ExpectedVersion.any(), events(1)))
                    .isInstanceOf(AppendRefusedException.class).hasMessageContaining("repeatable read");
            c.rollback();
            c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
        assertThat(store.streamInfo("order-rr")).isEmpty();
    }

    @Test
    void in_transaction_commits_appends_and_application_sql_together() throws SQLException {
        String result = store.inTransaction(tx -> {
            tx.append("order-d", ExpectedVersion.noStream(), events(1));
            insertOrder(tx.connection(), "d");
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(orders("d")).isOne();
        assertThat(store.readStreamForward("order-d", 0, 10)).hasSize(1);
    }

    @Test
    void a_checked_exception_from_the_work_rolls_back_and_reaches_the_caller_unchanged() {
        IOException failure = new IOException("payment gateway down");
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            tx.append("order-e", ExpectedVersion.noStream(), events(1));
            insertOrder(tx.connection(), "e");
            throw failure;
        }))
                .isSameAs(failure);
        assertThat(orders("e")).isZero();
        assertThat(store.streamInfo("order-e")).isEmpty();
    }

    @Test
    void the_works_own_sql_error_reaches_the_caller_unchanged() {
        insertOrderNow("dup");
        // before: the work's own duplicate key on the application's table came back as a StoreException
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            tx.append("order-dup", ExpectedVersion.noStream(), events(1));
            insertOrder(tx.connection(), "dup");
            return null;
        }))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("23505"));
        assertThat(store.streamInfo("order-dup")).isEmpty();
    }

    /** A one-connection pool on the test database, set up by {@code setting}. */
    private static com.zaxxer.hikari.HikariDataSource onePool(
            java.util.function.Consumer<com.zaxxer.hikari.HikariConfig> setting) {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(POSTGRES.jdbcUrl());
        config.setMaximumPoolSize(1);
        setting.accept(config);
        return new com.zaxxer.hikari.HikariDataSource(config);
    }

    private static void insertOrderNow(String id) {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            insertOrder(c, id);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void the_stores_own_append_works_on_a_pool_whose_default_isolation_is_not_read_committed() throws Exception {
        try (com.zaxxer.hikari.HikariDataSource pool = onePool(
                c -> c.setTransactionIsolation("TRANSACTION_REPEATABLE_READ"));
                EventStore onPool = EventStore.builder(pool).build()) {
            // before: refused (WM002) although the transaction is the store's own
            onPool.append("iso-1", ExpectedVersion.noStream(), events(2));
            assertThat(onPool.readStreamForward("iso-1", 0, 10)).hasSize(2);
            try (Connection c = pool.getConnection()) { // handed back as the pool set it up
                assertThat(c.getTransactionIsolation()).isEqualTo(Connection.TRANSACTION_REPEATABLE_READ);
                assertThat(c.getAutoCommit()).isTrue();
            }
        }
    }

    @Test
    void an_append_whose_stream_lock_wait_runs_out_is_a_retryable_failure() throws Exception {
        try (com.zaxxer.hikari.HikariDataSource pool = onePool(
                c -> c.setConnectionInitSql("SET lock_timeout = '100ms'"));
                EventStore impatient = EventStore.builder(pool).build();
                Connection holder = POSTGRES.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            store.append(holder, "locked-1", ExpectedVersion.any(), events(1)); // holds the stream's lock
            // before: a plain StoreException, which callers (subscriptions, workflows) do not retry
            assertThatThrownBy(() -> impatient.append("locked-1", ExpectedVersion.any(), events(1)))
                    .isInstanceOf(TransientStoreException.class)
                    .satisfies(e -> assertThat(((StoreException) e).isRetryable()).isTrue());
            holder.rollback();
            impatient.append("locked-1", ExpectedVersion.any(), events(1));
        }
    }

    @Test
    void a_conflict_inside_the_transaction_rolls_back_everything() {
        store.append("order-f", ExpectedVersion.noStream(), event("A"));
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            tx.appendMultiStream(List.of(
                    StreamAppend.of("order-g", ExpectedVersion.noStream(), events(1)),
                    StreamAppend.of("order-f", ExpectedVersion.noStream(), events(1))));
            return null;
        }))
                .isInstanceOf(StreamAlreadyExistsException.class);
        assertThat(store.streamInfo("order-g")).isEmpty();
        assertThat(store.streamInfo("order-f").orElseThrow().version()).isOne();
    }
}
