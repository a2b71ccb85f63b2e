package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.TopicPartition;

/**
 * Source events decided under the {@link AckLedger}'s lock, emitted to the listeners only after it
 * is released: a listener that calls back into the ledger, or waits for a thread that does, must
 * never find the lock held by its own caller. Not thread-safe: one per ledger call.
 */
final class PendingEvents {

    private record Pending(Kind kind, TopicPartition tp, long value, String detail) {}

    /** Created on the first event: most ledger calls decide none. */
    private List<Pending> pending;

    void add(Kind kind, TopicPartition tp, long value, String detail) {
        if (pending == null) {
            pending = new ArrayList<>(2);
        }
        pending.add(new Pending(kind, tp, value, detail));
    }

    /** Emits what was collected, in order; call with the ledger's lock released. */
    void emitTo(Events events) {
        if (pending != null) {
            for (Pending p : pending) {
                events.emit(p.kind(), p.tp(), p.value(), p.detail());
            }
        }
    }
}
