package dev.waymark.store;

import static dev.waymark.store.StoreFixture.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The one automatic retry on serialization failures and deadlocks. A trigger raises SQLSTATE 40001
 * (or 40P01) on the next N inserts into events, so the failure is a real server error.
 */
class TransientRetryTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static EventStore store;

    @BeforeAll
    static void setUp() throws SQLException {
        store = StoreFixture.migratedStore(POSTGRES);
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
    void a_second_failure_surfaces_as_a_retryable_transient_exception_and_nothing_is_written() throws SQLException {
        failNext("40001", 2);
        assertThatThrownBy(() -> store.append("retry-3", ExpectedVersion.noStream(), event("A")))
                .isInstanceOfSatisfying(TransientStoreException.class, e -> {
                    assertThat(e.isRetryable()).isTrue();
                    assertThat(e.sqlState()).isEqualTo("40001");
                })
                .hasMessageContaining("retry-3");
        assertThat(store.streamInfo("retry-3")).isEmpty();
    }

    @Test
    void other_server_errors_fail_fast_without_a_retry() throws SQLException {
        failNext("XX000", 1);
        assertThatThrownBy(() -> store.append("retry-4", ExpectedVersion.noStream(), event("A")))
                .isInstanceOfSatisfying(StoreException.class, e -> {
                    assertThat(e.isRetryable()).isFalse();
                    assertThat(e.sqlState()).isEqualTo("XX000");
                });
        assertThat(StoreFixture.count(POSTGRES.dataSource(), "SELECT last_value FROM fail_attempts"))
                .as("one attempt only").isOne();
        assertThat(store.streamInfo("retry-4")).isEmpty();
    }
}
