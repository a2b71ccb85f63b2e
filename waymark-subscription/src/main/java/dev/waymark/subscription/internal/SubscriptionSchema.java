package dev.waymark.subscription.internal;

import dev.waymark.store.plumbing.SchemaModule;
import java.util.List;

/**
 * The schema waymark-subscription owns (checkpoints, dead letters, shard leases), migrated after the
 * store's. Registered for {@code dev.waymark.store.Migrations} in {@code META-INF/services}.
 */
public final class SubscriptionSchema implements SchemaModule {

    /** For {@link java.util.ServiceLoader}. */
    public SubscriptionSchema() {}

    @Override
    public String name() {
        return "subscription";
    }

    @Override
    public int order() {
        return 200;
    }

    @Override
    public List<String> scripts() {
        return List.of("V1__subscriptions.sql");
    }
}
