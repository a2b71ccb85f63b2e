package dev.waymark.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Template databases on a {@link PostgresServer}: one per template key, migrated once and then copied
 * with {@code CREATE DATABASE ... TEMPLATE}. A template outlives the JVM on an external server, so
 * every JVM (and every build) that asks for the same key reuses it; JVMs that race for a missing one
 * serialise on an advisory lock in the server's maintenance database, and a template whose build was
 * interrupted (it is marked a template only once migrated) is dropped and built again.
 */
final class DatabaseTemplates {

    /** The name prefix of template databases. */
    static final String PREFIX = "wmt_";

    private static final Logger log = LoggerFactory.getLogger(DatabaseTemplates.class);

    /** Advisory lock class of template builds (the key is the second half). */
    private static final int LOCK_CLASS = 0x57_4d_54; // "WMT"

    private static final Map<String, String> ready = new ConcurrentHashMap<>();

    private DatabaseTemplates() {}

    /** The name of the template database of {@code key}: a content hash, so a new key is a new template. */
    static String nameOf(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return PREFIX + HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * The template database of {@code key} on {@code server}, built with {@code migrator} unless this
     * JVM or another already built it.
     */
    static String ensure(PostgresServer server, String key, Consumer<DataSource> migrator) {
        return ready.computeIfAbsent(nameOf(key), name -> buildOrReuse(server, name, migrator));
    }

    /** Builds template {@code name} unless it exists on the server, whichever JVM built it. */
    static String buildOrReuse(PostgresServer server, String name, Consumer<DataSource> migrator) {
        long started = System.nanoTime();
        // The lock lives as long as this session; closing it releases the lock even if the build throws.
        try (Connection admin = server.connect(server.maintenanceDatabase())) {
            try (PreparedStatement lock = admin.prepareStatement("SELECT pg_advisory_lock(?, hashtext(?))")) {
                lock.setInt(1, LOCK_CLASS);
                lock.setString(2, name);
                lock.execute();
            }
            Boolean template = isTemplate(admin, name);
            if (Boolean.TRUE.equals(template)) {
                log.debug("waymark testkit: reusing template database {}", name);
                return name;
            }
            if (template != null) {
                log.info("waymark testkit: dropping template database {} left half-built", name);
                server.dropDatabase(name);
            }
            server.createDatabase(name);
            migrate(server, name, migrator);
            try (Statement s = admin.createStatement()) {
                s.execute("ALTER DATABASE \"" + name + "\" IS_TEMPLATE true");
            }
            log.info("waymark testkit: built template database {} in {} ms", name,
                    (System.nanoTime() - started) / 1_000_000);
            return name;
        } catch (SQLException e) {
            throw new IllegalStateException("testkit: preparing template database " + name + " failed: "
                    + e.getMessage(), e);
        }
    }

    /** Whether {@code name} exists and is marked a template; null when it does not exist. */
    private static Boolean isTemplate(Connection admin, String name) throws SQLException {
        try (PreparedStatement s = admin.prepareStatement("SELECT datistemplate FROM pg_database WHERE datname = ?")) {
            s.setString(1, name);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() ? rs.getBoolean(1) : null;
            }
        }
    }

    private static void migrate(PostgresServer server, String name, Consumer<DataSource> migrator) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.jdbcUrl(name));
        config.setMaximumPoolSize(2);
        config.setPoolName("template-" + name);
        // Closing the pool ends every session on the template, which a copy requires.
        try (HikariDataSource pool = new HikariDataSource(config)) {
            migrator.accept(pool);
        }
    }
}
