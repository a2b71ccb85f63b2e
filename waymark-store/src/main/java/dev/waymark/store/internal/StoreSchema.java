package dev.waymark.store.internal;

import dev.waymark.store.plumbing.SchemaModule;
import java.util.List;

/**
 * The schema waymark-store owns (streams, events, appends, reads), migrated first. Registered for
 * {@code dev.waymark.store.Migrations} in {@code META-INF/services}.
 */
public final class StoreSchema implements SchemaModule {

    /** For {@link java.util.ServiceLoader}. */
    public StoreSchema() {}

    @Override
    public String name() {
        return "store";
    }

    @Override
    public int order() {
        return 100;
    }

    @Override
    public List<String> scripts() {
        return List.of("V1__event_store.sql");
    }
}
