package dev.waymark.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class DatabaseTemplateTest {

    private static final String KEY = "DatabaseTemplateTest " + UUID.randomUUID();
    private static final AtomicInteger migrations = new AtomicInteger();
    private static final List<String> made = new ArrayList<>();

    @RegisterExtension
    static final PostgresExtension POSTGRES = PostgresExtension.migrated(KEY, ds -> {
        migrations.incrementAndGet();
        run(ds, "CREATE TABLE migrated(id int PRIMARY KEY); INSERT INTO migrated VALUES (1), (2)");
    });

    @AfterAll
    static void dropTemplates() {
        made.add(DatabaseTemplates.nameOf(KEY));
        for (String name : made) {
            admin("UPDATE pg_database SET datistemplate = false WHERE datname = '" + name + "'");
            PostgresServer.get().dropDatabase(name);
        }
    }

    @Test
    void the_class_database_is_a_copy_of_the_migrated_template() throws SQLException {
        assertThat(count(POSTGRES.dataSource(), "SELECT count(*) FROM migrated")).isEqualTo(2);
        assertThat(POSTGRES.databaseName()).isNotEqualTo(DatabaseTemplates.nameOf(KEY));
        assertThat(migrations).hasValue(1);
    }

    @Test
    void a_second_class_with_the_same_key_copies_without_migrating() throws SQLException {
        PostgresServer server = PostgresServer.get();
        Consumer<DataSource> failing = ds -> {
            throw new AssertionError("migrated twice");
        };
        String template = DatabaseTemplates.ensure(server, KEY, failing);
        String copy = "wm_template_copy_" + Long.toHexString(System.nanoTime());
        server.createDatabase(copy, template);
        try (Connection c = server.connect(copy);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM migrated")) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(2);
        } finally {
            server.dropDatabase(copy);
        }
    }

    @Test
    void racing_builders_migrate_once_and_a_half_built_template_is_rebuilt() throws Exception {
        PostgresServer server = PostgresServer.get();
        String name = DatabaseTemplates.nameOf("race " + UUID.randomUUID());
        made.add(name);
        // A build that died after creating the database but before marking it a template.
        server.createDatabase(name);
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        Consumer<DataSource> slow = ds -> {
            runs.incrementAndGet();
            run(ds, "SELECT pg_sleep(0.2); CREATE TABLE built(x int)");
        };
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<String>> builders = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                // Each call stands for a JVM of its own: the per-JVM cache is bypassed.
                builders.add(pool.submit(() -> {
                    start.await();
                    return DatabaseTemplates.buildOrReuse(server, name, slow);
                }));
            }
            start.countDown();
            for (Future<String> builder : builders) {
                assertThat(builder.get(60, TimeUnit.SECONDS)).isEqualTo(name);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(runs).hasValue(1);
        try (Connection c = server.connect(name);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_tables WHERE tablename = 'built'")) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(1);
        }
    }

    private static long count(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void run(DataSource ds, String sql) {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void admin(String sql) {
        PostgresServer server = PostgresServer.get();
        try (Connection c = server.connect(server.maintenanceDatabase()); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
