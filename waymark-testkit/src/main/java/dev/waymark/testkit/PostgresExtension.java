package dev.waymark.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class a PostgreSQL database of its own on the JVM's {@link PostgresServer}, and drops
 * it after the class: an empty one, or a copy of a migrated template ({@link #migrated}). Register it
 * as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PostgresExtension POSTGRES = new PostgresExtension();
 * ...
 * DataSource ds = POSTGRES.dataSource();
 * }</pre>
 */
public final class PostgresExtension implements BeforeAllCallback, AfterAllCallback {

    /** The pool size of {@link #dataSource()}. */
    public static final int DEFAULT_POOL_SIZE = 20;

    private final String templateKey;
    private final Consumer<DataSource> migrator;
    private final List<HikariDataSource> pools = new ArrayList<>();
    private String database;
    private String template;
    private HikariDataSource dataSource;

    /** An extension giving each test class an empty database. */
    public PostgresExtension() {
        this(null, null);
    }

    private PostgresExtension(String templateKey, Consumer<DataSource> migrator) {
        this.templateKey = templateKey;
        this.migrator = migrator;
    }

    /**
     * An extension giving each test class a copy of a migrated template database, so no migration
     * runs per class. The template of {@code templateKey} is built once by {@code migrator} (handed a
     * data source on the empty template, closed afterwards) and kept on the server: later test
     * classes, later JVMs and concurrent JVMs on the same server copy it. Make {@code templateKey}
     * change whenever the schema {@code migrator} produces changes, for instance the text of every
     * migration script; it may be long (only its hash names the template).
     */
    public static PostgresExtension migrated(String templateKey, Consumer<DataSource> migrator) {
        return new PostgresExtension(Objects.requireNonNull(templateKey, "templateKey"),
                Objects.requireNonNull(migrator, "migrator"));
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        String owner = context.getRequiredTestClass().getSimpleName().toLowerCase(Locale.ROOT);
        database = "wm_" + (owner.length() > 40 ? owner.substring(0, 40) : owner) + "_"
                + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
        PostgresServer server = PostgresServer.get();
        if (templateKey == null) {
            server.createDatabase(database);
        } else {
            template = DatabaseTemplates.ensure(server, templateKey, migrator);
            server.createDatabase(database, template);
        }
        dataSource = newDataSource(DEFAULT_POOL_SIZE);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        synchronized (pools) {
            pools.forEach(HikariDataSource::close);
            pools.clear();
        }
        if (database != null) {
            PostgresServer.get().dropDatabase(database);
        }
    }

    /** The shared pool on this class's database. */
    public DataSource dataSource() {
        return requireStarted(dataSource);
    }

    /**
     * Runs {@code sql} (one statement, or several separated by semicolons without parameters) on a
     * connection of {@link #dataSource()} in autocommit; a failure is rethrown unchecked.
     */
    public void execute(String sql) {
        try (Connection c = dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("test set-up statement failed: " + e.getMessage(), e);
        }
    }

    /** The name of this class's database. */
    public String databaseName() {
        return requireStarted(database);
    }

    /** The template database this class's database was copied from; empty for an empty database. */
    public Optional<String> templateName() {
        requireStarted(database);
        return Optional.ofNullable(template);
    }

    /** The JDBC URL of this class's database. */
    public String jdbcUrl() {
        return PostgresServer.get().jdbcUrl(databaseName());
    }

    /** A new pool on this class's database, closed after the class (for a second store handle). */
    public HikariDataSource newDataSource(int poolSize) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(PostgresServer.get().jdbcUrl(requireStarted(database)));
        config.setMaximumPoolSize(poolSize);
        config.setPoolName("test-" + database);
        config.setConnectionTimeout(10_000);
        HikariDataSource pool = new HikariDataSource(config);
        synchronized (pools) {
            pools.add(pool);
        }
        return pool;
    }

    private static <T> T requireStarted(T value) {
        if (value == null) {
            throw new IllegalStateException("PostgresExtension is not started: register it on a static field"
                    + " with @RegisterExtension");
        }
        return value;
    }
}
