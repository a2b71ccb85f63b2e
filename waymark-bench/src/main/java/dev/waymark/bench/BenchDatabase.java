package dev.waymark.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A fresh database for one benchmark run: on the server of {@code -Dbench.url} (a JDBC URL whose
 * user may create databases), or on an embedded PostgreSQL when none is given. Dropped on close.
 */
final class BenchDatabase implements AutoCloseable {

    private static final java.util.concurrent.atomic.AtomicInteger POOLS = new java.util.concurrent.atomic.AtomicInteger();

    private final EmbeddedPostgres embedded;
    private final String adminUrl;
    private final String name;
    private final String url;
    private final String server;
    private final java.util.List<String> siblings = new java.util.concurrent.CopyOnWriteArrayList<>();

    private BenchDatabase(EmbeddedPostgres embedded, String adminUrl, String name, String url, String server) {
        this.embedded = embedded;
        this.adminUrl = adminUrl;
        this.name = name;
        this.url = url;
        this.server = server;
    }

    static BenchDatabase create() throws IOException, SQLException {
        String given = System.getProperty("bench.url", "");
        EmbeddedPostgres embedded = null;
        String admin = given;
        if (given.isBlank()) {
            embedded = EmbeddedPostgres.builder().setServerConfig("max_connections", "200").start();
            admin = "jdbc:postgresql://localhost:" + embedded.getPort() + "/postgres?user=postgres";
        }
        String name = "waymark_bench_" + Long.toString(System.currentTimeMillis(), 36);
        String server;
        try (Connection c = DriverManager.getConnection(admin); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
            try (ResultSet rs = s.executeQuery("SELECT version(), current_setting('synchronous_commit'),"
                    + " current_setting('fsync')")) {
                rs.next();
                server = rs.getString(1).replaceAll(" on .*", "") + ", synchronous_commit=" + rs.getString(2)
                        + ", fsync=" + rs.getString(3) + (embedded != null ? " (embedded)" : "");
            }
        }
        int slash = admin.indexOf('/', "jdbc:postgresql://".length());
        int question = admin.indexOf('?', slash);
        String url = admin.substring(0, slash + 1) + name + (question < 0 ? "" : admin.substring(question));
        return new BenchDatabase(embedded, admin, name, url, server);
    }

    HikariDataSource pool(int size) {
        return pool(url, size);
    }

    /**
     * Creates a further empty database on the same server, named after this one with {@code suffix}
     * (a lower-case identifier), dropped on close; returns its JDBC URL.
     */
    String createSibling(String suffix) throws SQLException {
        String sibling = name + "_" + suffix;
        try (Connection c = DriverManager.getConnection(adminUrl); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + sibling);
        }
        siblings.add(sibling);
        return url.replaceFirst("/" + name + "(?=\\?|$)", "/" + sibling);
    }

    /** A pool of {@code size} connections to the database at {@code jdbcUrl}. */
    HikariDataSource pool(String jdbcUrl, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setPoolName("bench-" + POOLS.incrementAndGet());
        return new HikariDataSource(config);
    }

    /** The database's name; a sibling's is this name, '_' and its suffix. */
    String name() {
        return name;
    }

    String url() {
        return url;
    }

    /** The JDBC URL of the server's administrative database (statistics read there do not count here). */
    String adminUrl() {
        return adminUrl;
    }

    String server() {
        return server;
    }

    @Override
    public void close() throws SQLException, IOException {
        try (Connection c = DriverManager.getConnection(adminUrl); Statement s = c.createStatement()) {
            for (String sibling : siblings) {
                s.execute("DROP DATABASE IF EXISTS " + sibling + " WITH (FORCE)");
            }
            s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }
}
