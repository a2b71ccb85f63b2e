package dev.waymark.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** The chaos tier's PostgreSQL restart is a crash (the restart runs crash recovery) that loses no acknowledged commit. */
class ChaosPostgresTest {

    private static long count(String jdbcUrl, String table) throws Exception {
        try (Connection c = DriverManager.getConnection(jdbcUrl);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void restart_is_a_crash_that_keeps_every_acknowledged_commit() throws Exception {
        try (ChaosPostgres postgres = new ChaosPostgres(Path.of("target", "chaos-postgres-test", "pgdata"))) {
            try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE kept (n int)");
                // crash recovery resets unlogged tables; a clean shutdown keeps their rows
                s.execute("CREATE UNLOGGED TABLE reset_by_crash_recovery (n int)");
                s.execute("CHECKPOINT"); // both tables exist on disk; their rows are only in the WAL / in memory
                s.execute("INSERT INTO kept SELECT generate_series(1, 1000)");
                s.execute("INSERT INTO reset_by_crash_recovery VALUES (1)");
            }

            int killed = postgres.crashAndRestart();

            assertThat(killed).as("the postmaster and its processes").isGreaterThan(1);
            assertThat(count(postgres.jdbcUrl(), "reset_by_crash_recovery")).as("rows of an unlogged table after the"
                    + " restart (0 only after crash recovery)").isZero();
            assertThat(count(postgres.jdbcUrl(), "kept")).as("committed rows after the crash").isEqualTo(1000);
        }
    }
}
