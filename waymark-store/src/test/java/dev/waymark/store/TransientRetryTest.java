package dev.waymark.store;

import static dev.waymark.store.StoreFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The automatic retries of store-managed appends on transaction rollbacks (SQLSTATE class 40):
 * bounded, with a capped, jittered backoff. A trigger raises a chosen SQLSTATE on the next N inserts
 * into events, so the failure is a real server error; one test provokes real deadlocks instead.
 */
class TransientRetryTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    /** Attempts of a store-managed append in all, as documented on {@link EventStore#append}. */
    private static final int ATTEMPTS = 5;

    private static EventStore store;

    @BeforeAll
    static void setUp() throws SQLException {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        // A sequence counts the attempts: nextval survives the rollback of the failing transaction.
        sql("CREATE TABLE fail_next (sqlstate text NOT NULL, times bigint NOT NULL)");
        sql("CREATE SEQUENCE fail_attempts");
        sql("""
                CREATE FUNCTION fail_insert() RETURNS trigger LANGUAGE plpgsql AS $$
                DECLARE v_state text; v_times bigint;
                BEGIN
                  SELECT sqlstate, times INTO v_state, v_times FROM fail_next;
                  IF FOUND AND nextval('fail_attempts') <= v_times THEN
                    RAISE EXCEPTION 'injected failure' USING ERRCODE = v_state;
                  END IF;
                  RETURN NEW;
                END $$""");
        sql("CREATE TRIGGER fail_insert BEFORE INSERT ON waymark.events FOR EACH ROW EXECUTE FUNCTION fail_insert()");
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static void sql(String statement) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }

    private static void failNext(String sqlstate, int times) throws SQLException {
        sql("DELETE FROM fail_next");
        sql("SELECT setval('fail_attempts', 1, false)");
        sql("INSERT INTO fail_next VALUES ('" + sqlstate + "', " + times + ")");
    }

    @Test
    void one_serialization_failure_is_retried_with_the_same_event_ids() throws SQLException {
        failNext("40001", 1);
        UUID id = UUID.randomUUID();
        AppendResult result = store.append("retry-1", ExpectedVersion.noStream(), event("A").withId(id));
        assertThat(result.eventIds()).containsExactly(id);
        assertThat(store.readStreamForward("retry-1", 0, 10)).extracting(RecordedEvent::eventId).containsExactly(id);
    }

    @Test
    void a_deadlock_is_retried_too() throws SQLException {
        failNext("40P01", 1);
        assertThat(store.append("retry-2", ExpectedVersion.noStream(), event("A")).streamVersion()).isOne();
    }

    @Test
    void failures_up_to_the_last_attempt_are_retried_after_a_growing_backoff() throws SQLException {
        failNext("40001", ATTEMPTS - 1);
        UUID id = UUID.randomUUID();
        long started = System.nanoTime();

        AppendResult result = store.append("retry-5", ExpectedVersion.noStream(), event("A").withId(id));

        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(result.eventIds()).containsExactly(id);
        assertThat(attempts()).isEqualTo(ATTEMPTS);
        // each pause is at least half of 10, 20, 40, 50 ms (doubling, capped): jitter never takes more
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(5 + 10 + 20 + 25));
    }

    @Test
    void a_failure_of_the_last_attempt_surfaces_as_a_retryable_transient_exception_and_nothing_is_written()
            throws SQLException {
        failNext("40001", ATTEMPTS);
        assertThatThrownBy(() -> store.append("retry-3", ExpectedVersion.noStream(), event("A")))
                .isInstanceOfSatisfying(TransientStoreException.class, e -> {
                    assertThat(e.isRetryable()).isTrue();
                    assertThat(e.sqlState()).isEqualTo("40001");
                })
                .hasMessageContaining("retry-3");
        assertThat(attempts()).isEqualTo(ATTEMPTS);
        assertThat(store.streamInfo("retry-3")).isEmpty();
    }

    @Test
    void every_transaction_rollback_of_sqlstate_class_40_is_transient() throws SQLException {
        failNext("40000", 1);
        assertThat(store.append("retry-6", ExpectedVersion.noStream(), event("A")).streamVersion()).isOne();
        assertThat(attempts()).isEqualTo(2);
    }

    @Test
    void an_interrupt_during_the_backoff_ends_the_retries_and_keeps_the_interrupt() throws SQLException {
        failNext("40P01", 1);
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> store.append("retry-7", ExpectedVersion.noStream(), event("A")))
                    .isInstanceOfSatisfying(TransientStoreException.class, e -> assertThat(e.getSuppressed())
                            .singleElement().isInstanceOf(InterruptedException.class));
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(attempts()).isOne();
        assertThat(store.streamInfo("retry-7")).isEmpty();
    }

    /**
     * Two real deadlocks in a row between a multi-stream append and another session. The append
     * locks its streams' keys in ascending order; the other session holds the higher key, waits
     * until the append holds the lower one and waits for it, then asks for the lower key: a cycle,
     * which the append's deadlock check (the other session never runs one) breaks by aborting the
     * append with 40P01. The other session then lets the lower key go, so the retry can take it,
     * and closes the cycle again.
     */
    @Test
    void a_deadlock_twice_in_a_row_is_retried_until_the_append_goes_through() throws Exception {
        sql("DELETE FROM fail_next");
        List<String> streams = List.of("deadlock-a", "deadlock-b");
        long[] keys = new long[2];
        for (int i = 0; i < 2; i++) {
            keys[i] = StoreFixture.count(POSTGRES.dataSource(),
                    "SELECT hashtextextended('waymark/" + streams.get(i) + "', 0)");
        }
        long low = Math.min(keys[0], keys[1]);
        long high = Math.max(keys[0], keys[1]);
        ExecutorService appender = Executors.newSingleThreadExecutor();
        try (Connection other = DriverManager.getConnection(POSTGRES.jdbcUrl());
                Statement st = other.createStatement()) {
            st.execute("SET deadlock_timeout = '10min'");
            st.execute("SELECT pg_advisory_lock(" + high + ")");
            Future<List<AppendResult>> append = appender.submit(() -> store.appendMultiStream(List.of(
                    StreamAppend.of(streams.get(0), ExpectedVersion.noStream(), List.of(event("A"))),
                    StreamAppend.of(streams.get(1), ExpectedVersion.noStream(), List.of(event("B"))))));
            for (int deadlock = 1; deadlock <= 2; deadlock++) {
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
                        .until(() -> waitingFor(other, high));
                // blocks until the append's deadlock check aborts it, which releases the lower key
                st.execute("SELECT pg_advisory_lock(" + low + ")");
                st.execute("SELECT pg_advisory_unlock(" + low + ")");
            }
            st.execute("SELECT pg_advisory_unlock_all()");

            List<AppendResult> results = append.get(30, TimeUnit.SECONDS);
            assertThat(results).extracting(AppendResult::streamVersion).containsExactly(1L, 1L);
        } finally {
            appender.shutdownNow();
            assertThat(appender.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(store.readStreamForward("deadlock-a", 0, 10)).hasSize(1);
    }

    /** Whether some session waits for the advisory lock {@code key} (its two halves are classid and objid). */
    private static boolean waitingFor(Connection connection, long key) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement("""
                SELECT count(*) FROM pg_locks
                 WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
                   AND classid = ((?::bigint >> 32) & 4294967295)::oid
                   AND objid = (?::bigint & 4294967295)::oid""")) {
            ps.setLong(1, key);
            ps.setLong(2, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1) > 0;
            }
        }
    }

    private static long attempts() {
        return StoreFixture.count(POSTGRES.dataSource(), "SELECT last_value FROM fail_attempts");
    }

    @Test
    void other_server_errors_fail_fast_without_a_retry() throws SQLException {
        failNext("XX000", 1);
        assertThatThrownBy(() -> store.append("retry-4", ExpectedVersion.noStream(), event("A")))
                .isInstanceOfSatisfying(StoreException.class, e -> {
                    assertThat(e.isRetryable()).isFalse();
                    assertThat(e.sqlState()).isEqualTo("XX000");
                });
        assertThat(attempts()).as("one attempt only").isOne();
        assertThat(store.streamInfo("retry-4")).isEmpty();
    }
}
