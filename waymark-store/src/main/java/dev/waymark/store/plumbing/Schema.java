package dev.waymark.store.plumbing;

import dev.waymark.store.StoreConfigException;
import java.util.regex.Pattern;

/** Schema names: validated to a plain lower-case identifier, then always used double-quoted. */
public final class Schema {

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

    private Schema() {}

    /**
     * Checks a schema name.
     *
     * @throws StoreConfigException naming the rule
     */
    public static String requireValid(String schema) {
        if (schema == null || !IDENTIFIER.matcher(schema).matches()) {
            throw new StoreConfigException("schema must be a lower-case identifier of 1 to 63 characters"
                    + " ([a-z_][a-z0-9_]*), got " + (schema == null ? "null" : "'" + schema + "'"));
        }
        return schema;
    }

    /** The schema as a quoted identifier. */
    public static String quote(String schema) {
        return '"' + requireValid(schema) + '"';
    }
}
