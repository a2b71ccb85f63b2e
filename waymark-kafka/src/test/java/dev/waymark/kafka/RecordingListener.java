package dev.waymark.kafka;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Keeps every event, for assertions and waits. */
final class RecordingListener implements KafkaSourceListener {

    final List<KafkaSourceEvent> events = new CopyOnWriteArrayList<>();

    @Override
    public void onEvent(KafkaSourceEvent event) {
        events.add(event);
    }

    List<KafkaSourceEvent> of(Kind kind) {
        return events.stream().filter(e -> e.kind() == kind).toList();
    }

    long count(Kind kind) {
        return of(kind).size();
    }
}
