package dev.waymark.kafka.internal;

import dev.waymark.kafka.DeadLetterHeaders;
import dev.waymark.store.DeadLetterReason;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The dead letter of a record: its key, value and headers exactly as consumed (null and empty kept
 * apart), plus the {@link DeadLetterHeaders}, whose size is bounded by {@link #headroom(String)}.
 */
final class DeadLetterRecords {

    /** The longest topic name Kafka allows. */
    private static final int MAX_TOPIC_BYTES = 249;
    /** A varint (a header's key or value length, the header count, the record length) takes at most 5 bytes. */
    private static final int MAX_VARINT = 5;
    /** Digits of an int and of a long, with the sign. */
    private static final int INT_DIGITS = 11;
    private static final int LONG_DIGITS = 20;
    /** The longest reason code ({@code max_attempts}), with room to spare. */
    private static final int MAX_CODE_BYTES = 32;
    /**
     * A {@code DeadLetterTracing} listener may give the dead letter a new W3C trace context: a
     * {@code traceparent} (55 characters in version 00; room for later versions) and a
     * {@code tracestate} (at most 512 characters by the W3C specification).
     */
    private static final int TRACE_CONTEXT_BYTES = header("traceparent", 128) + header("tracestate", 512);
    /**
     * The producer checks a record against {@code max.request.size} with an upper-bound estimate
     * (largest varints for the timestamp and offset deltas): a little more than it really takes.
     */
    private static final int ESTIMATE_SLACK = 64;

    private DeadLetterRecords() {}

    /**
     * The most bytes a dead letter takes beyond its record as consumed: the added headers with
     * their longest values (the group id as configured), a trace context, and the record's grown
     * length and header-count varints. Sizes the dead-letter producer's {@code max.request.size}
     * and the {@code max.message.bytes} of the dead-letter topics the source creates.
     */
    static int headroom(String groupId) {
        return header(DeadLetterHeaders.REASON_CODE, MAX_CODE_BYTES)
                + header(DeadLetterHeaders.REASON, DeadLetterHeaders.MAX_REASON_BYTES)
                + header(DeadLetterHeaders.ATTEMPT, INT_DIGITS)
                + header(DeadLetterHeaders.ORIGINAL_TOPIC, MAX_TOPIC_BYTES)
                + header(DeadLetterHeaders.ORIGINAL_PARTITION, INT_DIGITS)
                + header(DeadLetterHeaders.ORIGINAL_OFFSET, LONG_DIGITS)
                + header(DeadLetterHeaders.ORIGINAL_TIMESTAMP, LONG_DIGITS)
                + header(DeadLetterHeaders.GROUP, utf8(groupId).length)
                + TRACE_CONTEXT_BYTES + 2 * MAX_VARINT + ESTIMATE_SLACK;
    }

    private static int header(String name, int valueBytes) {
        return MAX_VARINT + utf8(name).length + MAX_VARINT + valueBytes;
    }

    /** The dead letter of {@code record} for topic {@code target}. */
    static ProducerRecord<byte[], byte[]> of(ConsumerRecord<byte[], byte[]> record, String target,
            DeadLetterReason reason, int attempt, String groupId) {
        ProducerRecord<byte[], byte[]> out = new ProducerRecord<>(target, null, record.key(), record.value());
        for (Header h : record.headers()) {
            out.headers().add(h.key(), h.value());
        }
        add(out, DeadLetterHeaders.REASON_CODE, reason.kind());
        out.headers().add(DeadLetterHeaders.REASON, truncate(reason.summary(), DeadLetterHeaders.MAX_REASON_BYTES));
        add(out, DeadLetterHeaders.ATTEMPT, Integer.toString(Math.max(attempt, 0)));
        add(out, DeadLetterHeaders.ORIGINAL_TOPIC, record.topic());
        add(out, DeadLetterHeaders.ORIGINAL_PARTITION, Integer.toString(record.partition()));
        add(out, DeadLetterHeaders.ORIGINAL_OFFSET, Long.toString(record.offset()));
        if (record.timestamp() >= 0) {
            add(out, DeadLetterHeaders.ORIGINAL_TIMESTAMP, Long.toString(record.timestamp()));
        }
        add(out, DeadLetterHeaders.GROUP, groupId);
        return out;
    }

    /**
     * {@code text} in UTF-8, at most {@code max} bytes: a longer one is cut before the character
     * that would cross the bound (never inside a character or between a surrogate pair's halves)
     * and ends with an ellipsis.
     */
    static byte[] truncate(String text, int max) {
        byte[] bytes = utf8(text);
        if (bytes.length <= max) {
            return bytes;
        }
        byte[] ellipsis = utf8("…");
        int end = max - ellipsis.length;
        while (end > 0 && (bytes[end] & 0xC0) == 0x80) {
            end--; // a continuation byte: step back to the start of its character
        }
        byte[] out = new byte[end + ellipsis.length];
        System.arraycopy(bytes, 0, out, 0, end);
        System.arraycopy(ellipsis, 0, out, end, ellipsis.length);
        return out;
    }

    private static void add(ProducerRecord<byte[], byte[]> out, String name, String value) {
        out.headers().add(name, utf8(value));
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
