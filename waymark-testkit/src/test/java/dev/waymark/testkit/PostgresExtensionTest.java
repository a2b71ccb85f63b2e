package dev.waymark.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class PostgresExtensionTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    @Test
    void each_class_gets_its_own_empty_database() throws Exception {
        assertThat(POSTGRES.databaseName()).startsWith("wm_postgresextensiontest_");
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT current_database(),"
                        + " (SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema'))")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo(POSTGRES.databaseName());
            assertThat(rs.getLong(2)).isZero();
        }
        assertThat(POSTGRES.jdbcUrl()).contains("/" + POSTGRES.databaseName());
    }

    @Test
    void jdbc_urls_are_repointed_at_another_database_keeping_their_options() {
        JdbcUrl url = JdbcUrl.parse("jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres&ssl=false");
        assertThat(url.withDatabase("other").toString())
                .isEqualTo("jdbc:postgresql://127.0.0.1:5432/other?user=postgres&ssl=false");
        assertThat(JdbcUrl.parse("jdbc:postgresql://h/db").withDatabase("x").toString())
                .isEqualTo("jdbc:postgresql://h/x");
        assertThatThrownBy(() -> JdbcUrl.parse("jdbc:mysql://h/db")).hasMessageContaining("not a PostgreSQL JDBC URL");
    }

    @Test
    void the_manual_clock_moves_only_when_told() {
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        ManualClock clock = new ManualClock(start);
        assertThat(clock.instant()).isEqualTo(start);
        clock.advance(Duration.ofSeconds(30));
        assertThat(clock.instant()).isEqualTo(start.plusSeconds(30));
        var zoned = clock.withZone(ZoneId.of("Europe/Paris"));
        clock.set(start);
        assertThat(zoned.instant()).isEqualTo(start);
        assertThat(zoned.getZone()).isEqualTo(ZoneId.of("Europe/Paris"));
    }
}
