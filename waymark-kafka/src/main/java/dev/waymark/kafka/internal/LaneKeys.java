package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaOrdering;
import dev.waymark.messaging.Concurrency;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Which records a retry holds back behind the retried one, from the processor's concurrency and the
 * source's ordering: serial (and orderedByKey over {@link KafkaOrdering#PARTITION}) the whole
 * partition; orderedByKey over keys the records of the same key (a null key none); unordered none.
 */
final class LaneKeys {

    /** What a retry holds back. */
    enum Scope {
        /** Every later record of the partition. */
        PARTITION,
        /** The later records of the retried record's key. */
        KEY,
        /** Nothing but the retried record. */
        RECORD
    }

    private static final Object PARTITION_LANE = new Object();

    private final Scope scope;

    private LaneKeys(Scope scope) {
        this.scope = scope;
    }

    /** Serial: what a source assumes until its processor tells it otherwise. */
    static final LaneKeys SERIAL = new LaneKeys(Scope.PARTITION);

    /** The lanes for a processor running with {@code concurrency} over records keyed by {@code ordering}. */
    static LaneKeys of(Concurrency concurrency, KafkaOrdering ordering) {
        return switch (concurrency) {
            case Concurrency.Serial s -> SERIAL;
            case Concurrency.OrderedByKey k -> ordering == KafkaOrdering.PARTITION ? SERIAL : new LaneKeys(Scope.KEY);
            case Concurrency.Unordered u -> new LaneKeys(Scope.RECORD);
        };
    }

    Scope scope() {
        return scope;
    }

    /** The lane {@code record} joins when its partition holds one under that key, or null: it joins none. */
    Object of(ConsumerRecord<byte[], byte[]> record) {
        return switch (scope) {
            case PARTITION -> PARTITION_LANE;
            case KEY -> record.key() == null ? null : ByteBuffer.wrap(record.key());
            case RECORD -> null;
        };
    }

    /** Whether {@code later} waits behind {@code retried} (both of one partition). */
    boolean sameLane(ConsumerRecord<byte[], byte[]> retried, ConsumerRecord<byte[], byte[]> later) {
        return switch (scope) {
            case PARTITION -> true;
            case KEY -> retried.key() != null && Arrays.equals(retried.key(), later.key());
            case RECORD -> false;
        };
    }
}
