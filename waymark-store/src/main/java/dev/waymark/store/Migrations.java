package dev.waymark.store;

import dev.waymark.store.plumbing.Schema;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;

/**
 * The versioned DDL of a Waymark schema, applied by Flyway with its own history table
 * ({@value #HISTORY_TABLE}) inside the schema. Waymark never runs DDL on its own: call
 * {@link #migrate()} from a deployment step, or hand {@link #sql()} to a DBA and record it with
 * {@link #baseline()} afterwards.
 */
public final class Migrations {

    /** Flyway's history table, inside the schema. */
    public static final String HISTORY_TABLE = "waymark_schema_history";

    /** The migration scripts in order; resources under {@value #LOCATION}. */
    public static final List<String> SCRIPTS = List.of("V1__event_store.sql", "V2__subscriptions.sql", "V3__workflows.sql",
            "V4__workflow_step_batches.sql", "V5__workflow_fewer_statements.sql", "V6__workflow_set_based_steps.sql",
            "V7__workflow_set_based_completions.sql",
            "V8__plans_independent_of_table_size.sql", "V9__reads_that_walk_their_index.sql",
            "V10__workflow_garbage_collection.sql",
            "V11__workflow_fences_after_collection.sql", "V12__workflow_retry_revives_awakeables.sql",
            "V13__hidden_event_probe.sql", "V14__children_only_of_live_parents.sql",
            "V15__collection_detaches_children.sql",
            "V16__appends_after_stream_locks.sql", "V17__dead_letter_errors.sql",
            "V18__append_batches.sql", "V19__workflow_resume_claims.sql");

    /** Where the scripts live on the classpath. */
    public static final String LOCATION = "db/waymark";

    private static final String SCHEMA_PLACEHOLDER = "${flyway:defaultSchema}";

    private final DataSource dataSource;
    private final String schema;

    /** Migrations of {@code schema} through {@code dataSource}. */
    public Migrations(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = Schema.requireValid(schema);
    }

    /**
     * Creates the schema if needed and applies every pending migration, each in its own transaction.
     *
     * @return the number of migrations applied (0 when up to date)
     */
    public int migrate() {
        try {
            return flyway().migrate().migrationsExecuted;
        } catch (FlywayException e) {
            throw new StoreException("migrating schema \"" + schema + "\" failed: " + e.getMessage(), null, e);
        }
    }

    /** The version of the last script ({@code V17__x.sql} is 17): versions may skip numbers. */
    static String latestVersion() {
        String last = SCRIPTS.get(SCRIPTS.size() - 1);
        return last.substring(1, last.indexOf("__"));
    }

    /** Records every migration as applied without running it, after a DBA applied {@link #sql()} by hand. */
    public void baseline() {
        try {
            Flyway.configure(Migrations.class.getClassLoader())
                    .dataSource(dataSource)
                    .schemas(schema)
                    .defaultSchema(schema)
                    .table(HISTORY_TABLE)
                    .locations("classpath:" + LOCATION)
                    .baselineVersion(latestVersion())
                    .baselineDescription("applied by hand from Migrations.sql()")
                    .load()
                    .baseline();
        } catch (FlywayException e) {
            throw new StoreException("baselining schema \"" + schema + "\" failed: " + e.getMessage(), null, e);
        }
    }

    /** The applied version, or empty text when nothing is applied. */
    public String currentVersion() {
        try {
            MigrationInfo current = flyway().info().current();
            return current == null || current.getVersion() == null ? "" : current.getVersion().getVersion();
        } catch (FlywayException e) {
            throw new StoreException("reading the migration state of \"" + schema + "\" failed: " + e.getMessage(),
                    null, e);
        }
    }

    /** How many migrations are not applied yet. */
    public int pendingCount() {
        try {
            return flyway().info().pending().length;
        } catch (FlywayException e) {
            throw new StoreException("reading the migration state of \"" + schema + "\" failed: " + e.getMessage(),
                    null, e);
        }
    }

    /** Every migration's SQL for this schema, in order, without touching the database. */
    public String sql() {
        return sql(schema);
    }

    /** Every migration's SQL for {@code schema}, in order, for teams whose DBAs apply DDL. */
    public static String sql(String schema) {
        Schema.requireValid(schema);
        StringBuilder out = new StringBuilder("CREATE SCHEMA IF NOT EXISTS \"" + schema + "\";\n");
        for (String script : SCRIPTS) {
            out.append("\n-- ").append(script).append('\n').append(read(script).replace(SCHEMA_PLACEHOLDER, schema));
        }
        return out.toString();
    }

    private static String read(String script) {
        try (InputStream in = Migrations.class.getClassLoader().getResourceAsStream(LOCATION + "/" + script)) {
            if (in == null) {
                throw new IllegalStateException("migration script missing from the classpath: " + script);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Flyway flyway() {
        return Flyway.configure(Migrations.class.getClassLoader())
                .dataSource(dataSource)
                .schemas(schema)
                .defaultSchema(schema)
                .createSchemas(true)
                .table(HISTORY_TABLE)
                .locations("classpath:" + LOCATION)
                .load();
    }
}
