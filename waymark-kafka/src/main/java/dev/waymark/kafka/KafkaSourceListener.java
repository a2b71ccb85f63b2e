package dev.waymark.kafka;

/**
 * Observes a {@link KafkaSource}. Called on the source's consumer thread or on the thread that
 * acknowledges; must be fast and must not call back into the source. A runtime exception,
 * {@code LinkageError} or {@code AssertionError} it throws is logged and ignored.
 */
@FunctionalInterface
public interface KafkaSourceListener {

    /** One event. */
    void onEvent(KafkaSourceEvent event);
}
