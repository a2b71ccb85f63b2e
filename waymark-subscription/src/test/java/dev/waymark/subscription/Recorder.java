package dev.waymark.subscription;

import dev.waymark.store.RecordedEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** A handler that records every delivery and answers with a rule. */
final class Recorder implements EventHandler {

    final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
    private final Function<Delivery, Ack> rule;

    Recorder(Function<Delivery, Ack> rule) {
        this.rule = rule;
    }

    static Recorder ok() {
        return new Recorder(d -> Ack.ok());
    }

    @Override
    public Ack handle(Delivery delivery) {
        deliveries.add(delivery);
        return rule.apply(delivery);
    }

    List<Long> versions(String stream) {
        return deliveries.stream().map(Delivery::event).filter(e -> e.streamName().equals(stream))
                .map(RecordedEvent::streamVersion).toList();
    }

    List<String> types() {
        return deliveries.stream().map(d -> d.event().type()).toList();
    }

    int size() {
        return deliveries.size();
    }
}
