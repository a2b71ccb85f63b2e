package dev.waymark.subscription;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A subscriber in a separate JVM is killed with SIGKILL in the middle of its run; after a restart
 * every event is handled at least once and the checkpoint reaches the head.
 */
class SubscriberKillTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int STREAMS = 40;
    private static final int PER_STREAM = 100;
    private static final int TOTAL = STREAMS * PER_STREAM;

    private static EventStore store;

    @BeforeAll
    static void setUp() throws Exception {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE handled (event_id uuid NOT NULL, pid bigint NOT NULL)");
        }
        for (int v = 0; v < PER_STREAM; v += 10) {
            for (int s = 0; s < STREAMS; s++) {
                List<EventData> batch = new ArrayList<>();
                for (int k = 0; k < 10; k++) {
                    batch.add(EventData.json("Tick", "{\"v\":" + (v + k) + "}"));
                }
                store.append("kill-" + s, ExpectedVersion.any(), batch);
            }
        }
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static Process startSubscriber(String label) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Path log = Path.of("target", "subscriber-" + label + ".log");
        Files.createDirectories(log.getParent());
        return new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                SubscriberProcess.class.getName(), POSTGRES.jdbcUrl(), "killable", "kill", "500")
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.PIPE)
                .start();
    }

    private static long count(String sql) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void a_subscriber_killed_mid_run_loses_nothing_after_restart() throws Exception {
        Process first = startSubscriber("first");
        await("the first subscriber handles events and checkpoints some").atMost(Duration.ofSeconds(60))
                .until(() -> count("SELECT count(*) FROM handled") >= 600
                        && Checkpoints.of(store).get("killable", Partition.WHOLE).isPresent());
        first.destroyForcibly(); // SIGKILL
        assertThat(first.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(first.exitValue()).isEqualTo(137);
        long handledBeforeKill = count("SELECT count(DISTINCT event_id) FROM handled");
        assertThat(handledBeforeKill).as("killed in the middle of the run").isLessThan(TOTAL);

        Process second = startSubscriber("second");
        try {
            GlobalPosition head = store.readCategoryBackward("kill", GlobalPosition.END, 1).get(0).position();
            await("after the restart the checkpoint reaches the head").atMost(Duration.ofSeconds(120))
                    .until(() -> Checkpoints.of(store).get("killable", Partition.WHOLE).equals(Optional.of(head)));
        } finally {
            second.getOutputStream().close(); // ends the second subscriber cleanly
            assertThat(second.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }

        List<RecordedEvent> all = store.categoryForward("kill", GlobalPosition.START, 1000).toList();
        assertThat(all).hasSize(TOTAL);
        assertThat(count("SELECT count(DISTINCT event_id) FROM handled")).as("every event handled at least once")
                .isEqualTo(TOTAL);
        assertThat(count("SELECT count(DISTINCT pid) FROM handled")).isEqualTo(2);
        long duplicates = count("SELECT count(*) FROM handled") - TOTAL;
        assertThat(duplicates).as("replays are bounded by the checkpoint interval").isBetween(0L, 1000L);
        assertThat(new File("target/subscriber-second.log")).exists();
    }
}
