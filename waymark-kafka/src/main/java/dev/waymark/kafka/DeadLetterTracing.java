package dev.waymark.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A listener that also hears about each dead-letter publication while it happens, for tracing
 * ({@link dev.waymark.kafka.otel.KafkaTracing}). Register it like any listener
 * ({@code KafkaSourceConfigBuilder.listener}).
 */
public interface DeadLetterTracing extends KafkaSourceListener {

    /** The end of one publication. */
    @FunctionalInterface
    interface Scope {
        /** The broker acknowledged the dead letter ({@code error} null), or publishing failed with {@code error}. */
        void end(Throwable error);
    }

    /**
     * {@code out} is about to be published as the dead letter of {@code original}; its headers may be
     * changed (a trace context added). Returns the scope that is ended when the publication ends.
     */
    Scope publishing(ConsumerRecord<byte[], byte[]> original, ProducerRecord<byte[], byte[]> out);

    @Override
    default void onEvent(KafkaSourceEvent event) {}
}
