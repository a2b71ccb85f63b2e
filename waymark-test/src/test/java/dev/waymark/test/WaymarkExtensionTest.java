package dev.waymark.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class WaymarkExtensionTest {

    @RegisterExtension
    static final WaymarkExtension WAYMARK = new WaymarkExtension();

    @Test
    void the_store_is_migrated_without_a_migration_in_the_test() {
        EventStore store = WAYMARK.store();
        assertThat(store.migrations().pendingCount()).isZero();
        store.append("order-1", ExpectedVersion.noStream(), java.util.List.of(EventData.json("Placed", "{}")));
        assertThat(store.readStreamForward("order-1", 0, 10)).hasSize(1);
        assertThat(WAYMARK.store()).isSameAs(store);
    }

    @Test
    void connections_carry_the_clock_offset_and_advancing_moves_it() throws SQLException {
        TestClock clock = WAYMARK.clock();
        AtomicInteger advanced = new AtomicInteger();
        clock.onAdvance(advanced::incrementAndGet);
        Duration before = clock.offset();
        Instant javaBefore = clock.instant();
        clock.advance(Duration.ofDays(3));
        assertThat(advanced).hasValue(1);
        assertThat(clock.offset()).isEqualTo(before.plusDays(3));
        assertThat(clock.instant()).isAfterOrEqualTo(javaBefore.plus(Duration.ofDays(3)));
        try (Connection c = WAYMARK.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT extract(epoch FROM current_setting('"
                        + TestClock.SETTING + "')::interval)")) {
            rs.next();
            assertThat(Duration.ofMillis(Math.round(rs.getDouble(1) * 1000))).isEqualTo(clock.offset());
        }
        assertThatThrownBy(() -> clock.advance(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void kafka_is_offered_only_when_asked_for() {
        assertThatThrownBy(WAYMARK::kafka).hasMessageContaining("WaymarkExtension.withKafka()");
    }
}
