package dev.waymark.testkit;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL server tests run against, one per JVM: the server named by the environment
 * variable {@value #URL_VARIABLE} (a JDBC URL of a database the user may create databases from,
 * e.g. {@code jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}), or else an embedded
 * PostgreSQL started on first use and stopped when the JVM exits.
 */
public final class PostgresServer {

    /** The environment variable naming an external server. */
    public static final String URL_VARIABLE = "WAYMARK_TEST_DATABASE_URL";

    private static final Logger log = LoggerFactory.getLogger(PostgresServer.class);
    private static PostgresServer instance;

    private final JdbcUrl adminUrl;
    private final EmbeddedPostgres embedded;

    private PostgresServer(JdbcUrl adminUrl, EmbeddedPostgres embedded) {
        this.adminUrl = adminUrl;
        this.embedded = embedded;
    }

    /** The JVM's server, started (embedded) or located (external) on first call. */
    public static synchronized PostgresServer get() {
        if (instance == null) {
            instance = start();
        }
        return instance;
    }

    private static PostgresServer start() {
        String external = System.getenv(URL_VARIABLE);
        if (external != null && !external.isBlank()) {
            log.info("waymark testkit: using PostgreSQL at {}", external);
            return new PostgresServer(JdbcUrl.parse(external), null);
        }
        try {
            long started = System.nanoTime();
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setServerConfig("max_connections", "300")
                    .start();
            log.info("waymark testkit: embedded PostgreSQL on port {} started in {} ms", pg.getPort(),
                    (System.nanoTime() - started) / 1_000_000);
            Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
                try {
                    pg.close();
                } catch (IOException e) {
                    log.warn("waymark testkit: stopping embedded PostgreSQL failed", e);
                }
            }));
            return new PostgresServer(
                    JdbcUrl.parse("jdbc:postgresql://localhost:" + pg.getPort() + "/postgres?user=postgres"), pg);
        } catch (IOException e) {
            throw new UncheckedIOException("could not start embedded PostgreSQL (set " + URL_VARIABLE
                    + " to use an existing server)", e);
        }
    }

    /** Whether this is the embedded server. */
    public boolean isEmbedded() {
        return embedded != null;
    }

    /** The JDBC URL of {@code database} on this server. */
    public String jdbcUrl(String database) {
        return adminUrl.withDatabase(database).toString();
    }

    /** Creates an empty database. */
    public void createDatabase(String database) {
        admin("CREATE DATABASE \"" + database + "\"");
    }

    /**
     * Creates a database as a copy of {@code template} (PostgreSQL copies its files: no statement of
     * the template runs again). Nobody may be connected to {@code template}.
     */
    public void createDatabase(String database, String template) {
        admin("CREATE DATABASE \"" + database + "\" TEMPLATE \"" + template + "\"");
    }

    /** The database of the server's URL, where databases are created from and templates are locked. */
    String maintenanceDatabase() {
        return adminUrl.database();
    }

    /** Drops a database, terminating its connections first. */
    public void dropDatabase(String database) {
        admin("DROP DATABASE IF EXISTS \"" + database + "\" WITH (FORCE)");
    }

    /** A new connection to {@code database}. */
    public Connection connect(String database) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(database), new Properties());
    }

    private void admin(String sql) {
        try (Connection c = DriverManager.getConnection(adminUrl.toString(), new Properties());
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("testkit: '" + sql + "' failed on " + adminUrl + ": " + e.getMessage(), e);
        }
    }
}
