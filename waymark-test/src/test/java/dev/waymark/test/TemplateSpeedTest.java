package dev.waymark.test;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventStore;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.testkit.PostgresServer;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A migrated database by copying the template is much faster than by migrating an empty one. */
class TemplateSpeedTest {

    private static final Logger log = LoggerFactory.getLogger(TemplateSpeedTest.class);

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    @Test
    void copying_the_template_beats_migrating() {
        PostgresServer server = PostgresServer.get();
        // Warm-up: Flyway's and the store's classes loaded, as for every test class after the first.
        long migrateMillis = Long.MAX_VALUE;
        for (int i = 0; i < 2; i++) {
            migrateMillis = Math.min(migrateMillis, timed(server, db -> {
                server.createDatabase(db);
                HikariConfig config = new HikariConfig();
                config.setJdbcUrl(server.jdbcUrl(db));
                config.setMaximumPoolSize(2);
                try (HikariDataSource ds = new HikariDataSource(config);
                        EventStore store = EventStore.builder(ds).build()) {
                    store.migrate();
                }
            }));
        }
        String template = templateOf(POSTGRES);
        long copyMillis = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            copyMillis = Math.min(copyMillis, timed(server, db -> server.createDatabase(db, template)));
        }
        log.info("time to a migrated database: create + migrate {} ms, copy of the template {} ms", migrateMillis,
                copyMillis);
        assertThat(copyMillis).isLessThan(migrateMillis);
    }

    private static long timed(PostgresServer server, Consumer<String> create) {
        String db = "wm_speed_" + Long.toHexString(System.nanoTime());
        long started = System.nanoTime();
        try {
            create.accept(db);
            return (System.nanoTime() - started) / 1_000_000;
        } finally {
            server.dropDatabase(db);
        }
    }

    private static String templateOf(PostgresExtension postgres) {
        return postgres.templateName().orElseThrow();
    }
}
