package dev.waymark.store;

import dev.waymark.store.plumbing.Schema;
import dev.waymark.store.plumbing.SchemaModule;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;

/**
 * The versioned DDL of a Waymark schema. Each Waymark module that has tables (waymark-store,
 * waymark-subscription, waymark-workflow) owns its migrations, applied by Flyway with a history
 * table of its own inside the schema ({@code waymark_store_history}, ...). An instance covers every
 * such module on the class path, in dependency order: store, then subscription, then workflow.
 * Waymark never runs DDL on its own: call {@link #migrate()} from a deployment step, or hand
 * {@link #sql()} to a DBA and record it with {@link #baseline()} afterwards.
 *
 * <p>A schema that holds the history of a development build ({@value #LEGACY_HISTORY_TABLE}) is
 * refused by every method that reads the database: there is no upgrade path from it.
 */
public final class Migrations {

    /** The single history table of development builds before each module owned its schema. */
    public static final String LEGACY_HISTORY_TABLE = "waymark_schema_history";

    private static final String SCHEMA_PLACEHOLDER = "${flyway:defaultSchema}";

    private final DataSource dataSource;
    private final String schema;

    /** Migrations of {@code schema} through {@code dataSource}, for every module on the class path. */
    public Migrations(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = Schema.requireValid(schema);
    }

    /**
     * The schema modules on the class path, in migration order. Not public: {@link SchemaModule} is
     * plumbing between Waymark's modules.
     *
     * @throws IllegalStateException when two modules have the same name
     */
    static List<SchemaModule> modules() {
        List<SchemaModule> found = new ArrayList<>();
        ServiceLoader.load(SchemaModule.class, Migrations.class.getClassLoader()).forEach(found::add);
        found.sort(Comparator.comparingInt(SchemaModule::order).thenComparing(SchemaModule::name));
        Set<String> names = new HashSet<>();
        for (SchemaModule m : found) {
            if (!names.add(m.name())) {
                throw new IllegalStateException("two schema modules named '" + m.name() + "' on the class path");
            }
        }
        return List.copyOf(found);
    }

    /** Every script of every module, as {@code <module>/<script>}, in the order they are applied. */
    public static List<String> scripts() {
        List<String> out = new ArrayList<>();
        for (SchemaModule m : modules()) {
            m.scripts().forEach(s -> out.add(m.name() + "/" + s));
        }
        return List.copyOf(out);
    }

    /**
     * Creates the schema if needed and applies every pending migration of every module, module by
     * module in order, each migration in its own transaction.
     *
     * @return the number of migrations applied (0 when up to date)
     * @throws StoreException when the schema holds the history of a development build (nothing is
     *     changed then) or a migration fails
     */
    public int migrate() {
        refuseLegacyHistory();
        int applied = 0;
        for (SchemaModule m : modules()) {
            try {
                applied += flyway(m).migrate().migrationsExecuted;
            } catch (FlywayException e) {
                throw new StoreException("migrating module " + m.name() + " of schema \"" + schema + "\" failed: "
                        + e.getMessage(), null, e);
            }
        }
        return applied;
    }

    /**
     * Records every module's migrations as applied without running them, after a DBA applied
     * {@link #sql()} by hand.
     */
    public void baseline() {
        refuseLegacyHistory();
        for (SchemaModule m : modules()) {
            try {
                configure(m).baselineVersion(m.latestVersion())
                        .baselineDescription("applied by hand from Migrations.sql()").load().baseline();
            } catch (FlywayException e) {
                throw new StoreException("baselining module " + m.name() + " of schema \"" + schema + "\" failed: "
                        + e.getMessage(), null, e);
            }
        }
    }

    /**
     * The applied version of each module, in migration order, as {@code store 1, subscription 1,
     * workflow 1}; a module with nothing applied is left out, and the text is empty when no module
     * has anything applied. {@link #versions()} gives the same per module.
     */
    public String currentVersion() {
        return versions().entrySet().stream().filter(e -> !e.getValue().isEmpty())
                .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
    }

    /** The applied version of each module by name, in migration order; empty text where nothing is applied. */
    public Map<String, String> versions() {
        refuseLegacyHistory();
        Map<String, String> out = new LinkedHashMap<>();
        for (SchemaModule m : modules()) {
            MigrationInfo current = info(m).current();
            out.put(m.name(), current == null || current.getVersion() == null ? "" : current.getVersion().getVersion());
        }
        return out;
    }

    /** How many migrations, over all modules, are not applied yet. */
    public int pendingCount() {
        refuseLegacyHistory();
        int pending = 0;
        for (SchemaModule m : modules()) {
            pending += info(m).pending().length;
        }
        return pending;
    }

    /** Every module's SQL for this schema, in order, without touching the database. */
    public String sql() {
        return sql(schema);
    }

    /** Every module's SQL for {@code schema}, in migration order, for teams whose DBAs apply DDL. */
    public static String sql(String schema) {
        Schema.requireValid(schema);
        StringBuilder out = new StringBuilder("CREATE SCHEMA IF NOT EXISTS \"" + schema + "\";\n");
        for (SchemaModule m : modules()) {
            for (String script : m.scripts()) {
                out.append("\n-- ").append(m.name()).append('/').append(script).append('\n')
                        .append(m.read(script).replace(SCHEMA_PLACEHOLDER, schema));
            }
        }
        return out.toString();
    }

    private org.flywaydb.core.api.MigrationInfoService info(SchemaModule m) {
        try {
            return flyway(m).info();
        } catch (FlywayException e) {
            throw new StoreException("reading the migration state of module " + m.name() + " of schema \"" + schema
                    + "\" failed: " + e.getMessage(), null, e);
        }
    }

    /**
     * Refuses a schema migrated by a development build: its single history table records versions 1
     * to 19 of scripts that no longer exist, and the objects they made would clash with the baselines.
     */
    private void refuseLegacyHistory() {
        try (Connection c = dataSource.getConnection();
                PreparedStatement s = c.prepareStatement(
                        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = ? AND tablename = ?")) {
            s.setString(1, schema);
            s.setString(2, LEGACY_HISTORY_TABLE);
            try (ResultSet rs = s.executeQuery()) {
                if (rs.next()) {
                    throw new StoreException("schema \"" + schema + "\" was migrated by a development build of Waymark"
                            + " (it has the history table \"" + schema + "\"." + LEGACY_HISTORY_TABLE + "); this"
                            + " version keeps one history per module and has no upgrade path from it, as that build"
                            + " was never released. Nothing was changed. Remedy: drop the schema and migrate again"
                            + " (DROP SCHEMA \"" + schema + "\" CASCADE deletes its data), or use another schema");
                }
            }
        } catch (SQLException e) {
            throw new StoreException("reading the migration state of schema \"" + schema + "\" failed: "
                    + e.getMessage(), e.getSQLState(), e);
        }
    }

    private Flyway flyway(SchemaModule m) {
        // The modules share the schema: the second one finds it non-empty and starts its own
        // history at version 0, below its first script.
        return configure(m).createSchemas(true).baselineOnMigrate(true).baselineVersion("0")
                .baselineDescription("history of module " + m.name() + " starts").load();
    }

    private org.flywaydb.core.api.configuration.FluentConfiguration configure(SchemaModule m) {
        return Flyway.configure(m.getClass().getClassLoader())
                .dataSource(dataSource)
                .schemas(schema)
                .defaultSchema(schema)
                .table(m.historyTable())
                .locations("classpath:" + m.location());
    }
}
