package dev.waymark.store.plumbing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The schema a Waymark module owns: its Flyway migrations, in a location and a history table of its
 * own inside the Waymark schema. Each module that has tables registers one implementation in
 * {@code META-INF/services/dev.waymark.store.plumbing.SchemaModule}; {@code dev.waymark.store.Migrations}
 * finds the modules on the class path with {@link java.util.ServiceLoader} and migrates them in
 * {@link #order()}. Plumbing between Waymark's modules, not an extension point for applications.
 */
public interface SchemaModule {

    /**
     * The module's short name, a lower-case identifier ({@code store}, {@code subscription},
     * {@code workflow}); it names the location and the history table.
     */
    String name();

    /**
     * Where the module is migrated among the others: lower first. A module comes after every module
     * whose tables or functions its SQL uses.
     */
    int order();

    /** The module's script file names under {@link #location()}, in version order. */
    List<String> scripts();

    /** The class path folder of the scripts: {@code db/waymark/<name>}. */
    default String location() {
        return "db/waymark/" + name();
    }

    /** Flyway's history table of this module, inside the Waymark schema: {@code waymark_<name>_history}. */
    default String historyTable() {
        return "waymark_" + name() + "_history";
    }

    /** The version of the last script ({@code V3__x.sql} is {@code 3}). */
    default String latestVersion() {
        List<String> scripts = scripts();
        String last = scripts.get(scripts.size() - 1);
        return last.substring(1, last.indexOf("__"));
    }

    /**
     * The text of one of {@link #scripts()}, read through this module's own class so that it works
     * whether the module is on the class path or the module path.
     *
     * @throws IllegalStateException when the script is missing
     */
    default String read(String script) {
        String path = "/" + location() + "/" + script;
        try (InputStream in = getClass().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("migration script missing: " + path + " of module " + name());
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
