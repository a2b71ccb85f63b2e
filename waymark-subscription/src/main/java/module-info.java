/**
 * Waymark's subscriptions: catch-up and live readers, consumer groups, checkpoints, dead letters and
 * the sharded worker pool. {@code .internal} packages are not exported.
 */
module dev.waymark.subscription {
    requires transitive dev.waymark.core;
    requires transitive dev.waymark.store;
    requires com.fasterxml.jackson.core;
    requires org.slf4j;
    requires static micrometer.core;

    exports dev.waymark.subscription;
    exports dev.waymark.subscription.shard;
    exports dev.waymark.subscription.micrometer;

    // Jackson reads and writes dead-letter reasons.
    opens dev.waymark.subscription.internal to com.fasterxml.jackson.databind;

    provides dev.waymark.store.plumbing.SchemaModule with dev.waymark.subscription.internal.SubscriptionSchema;
}
