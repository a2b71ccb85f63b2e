package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.testkit.PostgresExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A process appending with group commit is killed with SIGKILL while a batch is in flight (its
 * transaction has written rows and not committed): that batch leaves all of its appends or none,
 * and everything else stays whole (every append complete, every stream's versions gap-free).
 * A trigger of the test's slows every event insert, so that a batch takes long enough to be caught.
 */
class GroupCommitCrashTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final int WRITERS = 8;

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        POSTGRES.execute("""
                CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_sleep(0.01); RETURN NEW; END $$;
                CREATE TRIGGER slow_insert BEFORE INSERT ON waymark.events FOR EACH ROW EXECUTE FUNCTION slow_insert();
                """);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static long count(String sql) {
        return StoreFixture.count(POSTGRES.dataSource(), sql);
    }

    @Test
    void a_batch_in_flight_when_its_process_is_killed_leaves_all_of_its_appends_or_none() throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Path log = Path.of("target", "group-commit-child.log");
        Files.createDirectories(log.getParent());
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                GroupCommitChild.class.getName(), POSTGRES.jdbcUrl(), Integer.toString(WRITERS))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        AtomicLong xid = new AtomicLong();
        AtomicReference<Integer> backend = new AtomicReference<>();
        try {
            await("batches of several appends committed").atMost(Duration.ofSeconds(60)).until(() -> count("""
                    SELECT count(*) FROM (SELECT tx_id FROM waymark.events GROUP BY tx_id HAVING count(*) > 2) b
                    """) >= 3);
            await("a batch is in flight, its transaction holding written rows").atMost(Duration.ofSeconds(30))
                    .until(() -> {
                        try (Connection c = POSTGRES.dataSource().getConnection();
                                Statement s = c.createStatement();
                                ResultSet rs = s.executeQuery("""
                                        SELECT pid, backend_xid::text::bigint FROM pg_stat_activity
                                         WHERE datname = current_database() AND state = 'active'
                                           AND backend_xid IS NOT NULL AND query LIKE '%append_batch%'
                                        """)) {
                            if (!rs.next()) {
                                return false;
                            }
                            backend.set(rs.getInt(1));
                            xid.set(rs.getLong(2));
                            return true;
                        }
                    });
            child.destroyForcibly(); // SIGKILL, mid-batch
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(child.exitValue()).isEqualTo(137);
        } finally {
            child.destroyForcibly();
        }
        await("the killed batch's backend ended").atMost(Duration.ofSeconds(30))
                .until(() -> count("SELECT count(*) FROM pg_stat_activity WHERE pid = " + backend.get()) == 0);

        String status;
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_xact_status('" + xid.get() + "'::xid8)")) {
            rs.next();
            status = rs.getString(1);
        }
        long rowsOfBatch = count("SELECT count(*) FROM waymark.events WHERE tx_id = '" + xid.get() + "'::xid8");
        assertThat(status).isIn("committed", "aborted");
        if (status.equals("aborted")) {
            assertThat(rowsOfBatch).as("nothing of the aborted batch").isZero();
        } else {
            assertThat(rowsOfBatch).as("the batch committed as a whole").isGreaterThan(2);
        }
        assertThat(count("""
                SELECT count(*) FROM (SELECT data->>'append' FROM waymark.events GROUP BY 1 HAVING count(*) <> 2) torn
                """)).as("every append complete, in the killed batch and elsewhere").isZero();
        assertThat(count("""
                SELECT count(*) FROM (SELECT data->>'append' FROM waymark.events
                                       GROUP BY 1 HAVING count(DISTINCT tx_id) <> 1) split
                """)).as("each append in one transaction").isZero();
        assertThat(count("""
                SELECT count(*) FROM (SELECT stream_id FROM waymark.events GROUP BY stream_id
                                       HAVING max(stream_version) <> count(*) OR min(stream_version) <> 1) gaps
                """)).as("every stream's versions gap-free").isZero();
        // a store started after the crash appends on top of what survived
        AppendResult after = store.append("crash-0", ExpectedVersion.any(), StoreFixture.events(1));
        assertThat(after.streamVersion()).isEqualTo(count(
                "SELECT count(*) FROM waymark.events e JOIN waymark.streams s USING (stream_id) WHERE stream_name = 'crash-0'"));
    }
}
