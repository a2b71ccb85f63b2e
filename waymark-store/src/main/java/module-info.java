/**
 * Waymark's event store: appends, reads, stream lifecycle, the wake signal and migrations.
 *
 * <p>{@code dev.waymark.store.plumbing} is exported only to Waymark's own modules: it is shared
 * plumbing, not API. {@code dev.waymark.store.internal} is not exported at all.
 */
module dev.waymark.store {
    requires transitive dev.waymark.core;
    requires transitive java.sql;
    requires transitive com.fasterxml.jackson.databind;
    requires com.fasterxml.jackson.core;
    requires org.slf4j;
    requires org.postgresql.jdbc;
    requires flyway.core; // no Automatic-Module-Name in flyway-core 13: the name javac derives from the jar
    requires static micrometer.core;
    requires static io.opentelemetry.api;
    requires static io.opentelemetry.context;

    exports dev.waymark.store;
    exports dev.waymark.store.micrometer;
    exports dev.waymark.store.otel;
    exports dev.waymark.store.plumbing to
            dev.waymark.subscription,
            dev.waymark.workflow,
            dev.waymark.messaging,
            dev.waymark.kafka;

    // Jackson reads and writes the store's JSON values (event data and metadata, broadcast payloads).
    opens dev.waymark.store to com.fasterxml.jackson.databind;
    opens dev.waymark.store.internal to com.fasterxml.jackson.databind;

    // Migrations finds each module's schema (store, subscription, workflow) with ServiceLoader.
    uses dev.waymark.store.plumbing.SchemaModule;
    provides dev.waymark.store.plumbing.SchemaModule with dev.waymark.store.internal.StoreSchema;
}
