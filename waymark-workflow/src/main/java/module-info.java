/**
 * Waymark's durable workflows: the engine, the client, the resume worker and their telemetry.
 * {@code .internal} packages are not exported.
 */
module dev.waymark.workflow {
    requires transitive dev.waymark.core;
    requires transitive dev.waymark.store;
    requires transitive com.fasterxml.jackson.databind;
    requires com.fasterxml.jackson.core;
    requires com.fasterxml.jackson.datatype.jdk8;
    requires com.fasterxml.jackson.datatype.jsr310;
    requires org.slf4j;
    requires static micrometer.core;
    requires static io.opentelemetry.api;
    requires static io.opentelemetry.context;

    exports dev.waymark.workflow;
    exports dev.waymark.workflow.status;
    exports dev.waymark.workflow.listener;
    exports dev.waymark.workflow.gc;
    exports dev.waymark.workflow.exception;
    exports dev.waymark.workflow.child;
    exports dev.waymark.workflow.backpressure;
    exports dev.waymark.workflow.awakeable;
    exports dev.waymark.workflow.resume;
    exports dev.waymark.workflow.micrometer;
    exports dev.waymark.workflow.otel;

    // Jackson reads and writes the journal (Waymark's own values in it included).
    opens dev.waymark.workflow to com.fasterxml.jackson.databind;
    opens dev.waymark.workflow.status to com.fasterxml.jackson.databind;
    opens dev.waymark.workflow.listener to com.fasterxml.jackson.databind;
    opens dev.waymark.workflow.gc to com.fasterxml.jackson.databind;
    opens dev.waymark.workflow.exception to com.fasterxml.jackson.databind;
    opens dev.waymark.workflow.child to com.fasterxml.jackson.databind;
    opens dev.waymark.workflow.backpressure to com.fasterxml.jackson.databind;
    opens dev.waymark.workflow.awakeable to com.fasterxml.jackson.databind;
    opens dev.waymark.workflow.internal to com.fasterxml.jackson.databind;

    provides dev.waymark.store.plumbing.SchemaModule with dev.waymark.workflow.internal.WorkflowSchema;
}
