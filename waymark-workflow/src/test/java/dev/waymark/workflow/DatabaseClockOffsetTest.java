package dev.waymark.workflow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.status.WorkflowStatus;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The database clock seam: a session that sets {@code waymark.clock_offset} sees Waymark's time
 * moved by that much, so a sleep comes due for it when the offset passes the wake time, and for no
 * other session.
 */
class DatabaseClockOffsetTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static final WorkflowRegistry REGISTRY = new WorkflowRegistry()
            .register("napper", Long.class, String.class, (ctx, millis) -> {
                ctx.sleep("nap", Duration.ofMillis(millis));
                return ctx.step("after", String.class, () -> "rested");
            });

    @Test
    void a_session_with_a_clock_offset_sees_a_three_day_sleep_come_due_and_others_do_not() throws Exception {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            store.migrate();
            try (WorkflowEngine engine = WorkflowEngine.builder(store, REGISTRY).build()) {
                engine.start("napper", "long", Duration.ofDays(3).toMillis(), String.class);
                Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> engine
                        .handle("napper", "long", String.class).info().status() == WorkflowStatus.SUSPENDED);
            }
            try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
                assertThat(runnable(s)).as("no offset").isZero();
                s.execute("SET waymark.clock_offset = '2 days 23 hours'");
                assertThat(runnable(s)).as("an hour short of the wake time").isZero();
                assertThat(secondsAhead(s)).isBetween(255_599L, 255_601L);
                s.execute("SET waymark.clock_offset = '3 days 1 minute'");
                assertThat(runnable(s)).as("past the wake time").isEqualTo(1);
                try (Connection other = POSTGRES.dataSource().getConnection();
                        Statement o = other.createStatement()) {
                    assertThat(runnable(o)).as("another session").isZero();
                }
                s.execute("SET waymark.clock_offset = ''");
                assertThat(runnable(s)).as("an empty offset is none").isZero();
                assertThat(secondsAhead(s)).isBetween(-1L, 1L);
                s.execute("RESET waymark.clock_offset");
            }
        }
    }

    private static long runnable(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT waymark.wf_count_runnable()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long secondsAhead(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT round(extract(epoch FROM waymark.waymark_now() - now()))::bigint")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
