package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceEvent;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.kafka.KafkaSourceListener;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Fans source events out to the listeners; a failing listener is logged and skipped. */
public final class Events {

    private static final Logger log = LoggerFactory.getLogger(Events.class);

    private final String source;
    private final List<KafkaSourceListener> listeners;

    /** Events of source {@code source}. */
    public Events(String source, List<KafkaSourceListener> listeners) {
        this.source = source;
        this.listeners = List.copyOf(listeners);
    }

    /** The source's name. */
    public String source() {
        return source;
    }

    void emit(Kind kind, TopicPartition tp, long value, String detail) {
        if (listeners.isEmpty()) {
            return;
        }
        KafkaSourceEvent event = new KafkaSourceEvent(kind, source, tp == null ? null : tp.topic(),
                tp == null ? -1 : tp.partition(), value, detail);
        for (KafkaSourceListener listener : listeners) {
            try {
                listener.onEvent(event);
            } catch (RuntimeException | LinkageError | AssertionError e) {
                // LinkageError too: a metrics listener whose optional library is missing throws
                // NoClassDefFoundError, and that must not fail the consumer thread
                log.warn("kafka source '{}': listener failed on {}: {}", source, kind, e.toString());
            }
        }
    }
}
