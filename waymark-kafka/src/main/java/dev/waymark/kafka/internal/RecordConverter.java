package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaOrdering;
import dev.waymark.messaging.Attributes;
import dev.waymark.messaging.Envelope;
import dev.waymark.messaging.MessageKey;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;

/**
 * A Kafka record as an {@link Envelope}: id {@code topic-partition-offset}, cursor the offset, the
 * key's bytes intact (null stays null, empty stays empty) and the ordering key (those bytes, or the
 * partition), every header verbatim (order and duplicates kept), the record's timestamp, the
 * W3C trace context from the first {@code traceparent} / {@code tracestate} headers (exact case), the
 * attempt, and the tracing attributes {@code messaging.system=kafka},
 * {@code messaging.kafka.destination.partition} and {@code messaging.kafka.message.offset} (integers).
 * A null value becomes a tombstone (an empty payload with {@link Envelope#tombstone()} true); an
 * empty value stays an empty payload.
 */
public final class RecordConverter {

    private static final Attributes.Value KAFKA = new Attributes.Value.Text("kafka");

    private RecordConverter() {}

    /** The envelope of {@code record} delivered for the {@code attempt}-th time (from 0). */
    public static Envelope toEnvelope(ConsumerRecord<byte[], byte[]> record, int attempt, KafkaOrdering ordering) {
        return toEnvelope(record, attempt, ordering, record.topic() + "-" + record.partition());
    }

    /** As {@link #toEnvelope(ConsumerRecord, int, KafkaOrdering)} with the {@code topic-partition} id given. */
    static Envelope toEnvelope(ConsumerRecord<byte[], byte[]> record, int attempt, KafkaOrdering ordering,
            String partitionId) {
        MessageKey key = record.key() == null ? null : MessageKey.of(record.key());
        String traceparent = null;
        String tracestate = null;
        Header[] raw = record.headers().toArray();
        List<Envelope.Header> headers = raw.length == 0 ? List.of() : new ArrayList<>(raw.length);
        for (Header h : raw) {
            headers.add(new Envelope.Header(h.key(), h.value()));
            if (traceparent == null && "traceparent".equals(h.key()) && h.value() != null) {
                traceparent = new String(h.value(), StandardCharsets.UTF_8);
            } else if (tracestate == null && "tracestate".equals(h.key()) && h.value() != null) {
                tracestate = new String(h.value(), StandardCharsets.UTF_8);
            }
        }
        if (traceparent == null || traceparent.isEmpty()) {
            traceparent = null;
            tracestate = null; // tracestate means nothing without a parent
        }
        Instant eventTime = record.timestampType() == TimestampType.NO_TIMESTAMP_TYPE || record.timestamp() < 0
                ? null
                : Instant.ofEpochMilli(record.timestamp());
        String offset = Long.toString(record.offset());
        String id = partitionId + "-" + offset;
        Envelope.Builder builder = record.value() == null
                ? Envelope.tombstoneBuilder(id)
                : Envelope.builder(id, record.value());
        return builder
                .key(key)
                .orderingKey(ordering == KafkaOrdering.PARTITION ? MessageKey.ofUtf8(partitionId) : key)
                .headers(headers)
                .eventTime(eventTime)
                .attempt(attempt)
                .trace(traceparent, tracestate)
                .cursor(offset)
                .attributes(new Attributes(Map.of( // a few small objects per record, read only by tracing
                        "messaging.system", KAFKA,
                        "messaging.kafka.destination.partition", new Attributes.Value.Int64(record.partition()),
                        "messaging.kafka.message.offset", new Attributes.Value.Int64(record.offset()))))
                .build();
    }
}
