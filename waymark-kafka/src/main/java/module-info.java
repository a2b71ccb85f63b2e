/**
 * Waymark's Kafka adapter: sources and sinks for the messaging runtime, dead-letter topics.
 * {@code .internal} packages are not exported.
 */
module dev.waymark.kafka {
    requires transitive dev.waymark.core;
    requires transitive dev.waymark.messaging;
    requires transitive kafka.clients;
    requires org.slf4j;
    requires static micrometer.core;
    requires static io.opentelemetry.api;
    requires static io.opentelemetry.context;

    exports dev.waymark.kafka;
    exports dev.waymark.kafka.micrometer;
    exports dev.waymark.kafka.otel;
}
