package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Live delivery wakes on commits made through another store handle, without relying on polling
 * (the poll interval is far longer than the test's wait), and survives its LISTEN connection being
 * terminated.
 */
class LiveDeliveryTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Duration LONG_POLL = Duration.ofMinutes(30);
    private static final Duration WITHIN = Duration.ofSeconds(5);

    private static EventStore reader;
    private static EventStore writer;

    @BeforeAll
    static void setUp() {
        writer = EventStore.builder(POSTGRES.newDataSource(4)).build();
        reader = EventStore.builder(POSTGRES.newDataSource(4)).fallbackPoll(Duration.ofMinutes(10))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build();
    }

    @AfterAll
    static void tearDown() {
        reader.close();
        writer.close();
    }

    @Test
    void delivers_commits_from_another_handle_and_survives_a_terminated_listen_connection() throws Exception {
        Recorder recorder = Recorder.ok();
        try (Subscription s = Subscription.builder(reader, "live", Target.category("live"))
                .pollInterval(LONG_POLL).start(recorder)) {
            await().atMost(WITHIN).until(() -> listenerPid() != null);
            append(writer, "live-1", "A");
            await().atMost(WITHIN).until(() -> recorder.size() == 1);

            int pid = listenerPid();
            terminate(pid);
            await().atMost(Duration.ofSeconds(10)).until(() -> listenerPid() != null && listenerPid() != pid);

            for (int i = 0; i < 3; i++) {
                append(writer, "live-1", "After" + i);
                int expected = 2 + i;
                await().atMost(WITHIN).until(() -> recorder.size() == expected);
            }
            assertThat(recorder.types()).containsExactly("A", "After0", "After1", "After2");
        }
    }

    private static Integer listenerPid() throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pid FROM pg_stat_activity WHERE application_name ="
                        + " 'waymark-listener' AND datname = current_database() AND query LIKE 'LISTEN%'"
                        + " ORDER BY backend_start DESC LIMIT 1")) {
            return rs.next() ? rs.getInt(1) : null;
        }
    }

    private static void terminate(int pid) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(" + pid + ")");
        }
    }
}
