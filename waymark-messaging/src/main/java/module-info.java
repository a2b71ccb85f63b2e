/**
 * Waymark's message processing runtime: envelopes, acknowledgements, the adapter SPI, processors,
 * supervision and drain; the adapter for store subscriptions ({@code dev.waymark.messaging.store})
 * needs waymark-subscription. {@code .internal} packages are not exported.
 */
module dev.waymark.messaging {
    requires org.slf4j;
    requires transitive dev.waymark.store;
    requires static dev.waymark.subscription;
    requires static com.fasterxml.jackson.databind;
    requires static micrometer.core;
    requires static io.opentelemetry.api;
    requires static io.opentelemetry.context;

    exports dev.waymark.messaging;
    exports dev.waymark.messaging.batch;
    exports dev.waymark.messaging.store;
    exports dev.waymark.messaging.micrometer;
    exports dev.waymark.messaging.otel;
}
