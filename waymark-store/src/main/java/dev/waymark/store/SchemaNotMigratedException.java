package dev.waymark.store;

import java.io.Serial;

/**
 * The configured schema does not exist or lacks Waymark's tables: the schema name is wrong or the
 * migrations were not applied. Waymark never runs DDL implicitly; see {@link Migrations}.
 */
public final class SchemaNotMigratedException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String schema;

    /** The schema {@code schema} is missing or not migrated. */
    public SchemaNotMigratedException(String schema, String sqlState, Throwable cause) {
        super("schema \"" + schema + "\" does not exist or has no Waymark tables: check the schema name, or apply"
                + " the migrations (EventStore.migrations().migrate(), or the SQL from migrations().sql())",
                sqlState, cause);
        this.schema = schema;
    }

    /** The schema that was not found. */
    public String schema() {
        return schema;
    }
}
