package dev.waymark.messaging;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A message as every adapter normalizes it. Build with {@link #builder(String, byte[])} so that new
 * optional fields never break adapters.
 *
 * <p>Keys are bytes ({@link MessageKey}), as a Kafka client with a {@code ByteArrayDeserializer}
 * sees them: a key that is not UTF-8 arrives intact, and distinct keys stay distinct. No key (null)
 * and an empty key differ, and so do no payload at all ({@link #tombstone()}, a Kafka null value)
 * and an empty one.
 *
 * @param messageId stable identity, for idempotency, logs and traces
 * @param key the broker key exactly as received (Kafka: the record key; event store: the stream
 *     name in UTF-8), or null when the message has none
 * @param orderingKey the key {@link Concurrency#orderedByKey(int)} keeps in order, compared by its
 *     bytes, or null (unconstrained)
 * @param headers every header exactly as received (duplicates allowed), possibly empty
 * @param payload the body; empty (never null) for a tombstone
 * @param tombstone whether the source sent no payload at all (Kafka: a null value, the tombstone of
 *     a compacted topic) rather than an empty one; the payload is then empty
 * @param eventTime when the broker or store recorded the message, or null
 * @param ingestedAt when the adapter handed it to the runtime
 * @param attempt 0 for the first delivery; -1 when the adapter cannot know
 * @param traceparent the W3C traceparent, or null
 * @param tracestate the W3C tracestate, or null
 * @param cursor the position in the source (offset, global position), or null
 * @param attributes what the source tells tracing about the message (empty when it tells nothing);
 *     {@code MessageTracing} sets them on the message's span over its own
 */
public record Envelope(
        String messageId,
        MessageKey key,
        MessageKey orderingKey,
        List<Header> headers,
        byte[] payload,
        boolean tombstone,
        Instant eventTime,
        Instant ingestedAt,
        int attempt,
        String traceparent,
        String tracestate,
        String cursor,
        Attributes attributes) {

    /** Validates and copies. */
    public Envelope {
        if (messageId == null || messageId.isEmpty()) {
            throw new IllegalArgumentException("messageId must not be null or empty");
        }
        headers = List.copyOf(headers);
        if (payload == null) {
            throw new IllegalArgumentException("payload must not be null (an empty array; Envelope.tombstoneBuilder for"
                    + " a message without a payload)");
        }
        if (tombstone && payload.length > 0) {
            throw new IllegalArgumentException("a tombstone has no payload, got " + payload.length + " bytes");
        }
        Objects.requireNonNull(ingestedAt, "ingestedAt");
        if (attempt < -1) {
            throw new IllegalArgumentException("attempt must be >= 0, or -1 for unknown; got " + attempt);
        }
        if (attributes == null) {
            throw new IllegalArgumentException("attributes must not be null (Attributes.empty() for none)");
        }
    }

    /** A builder with every optional field empty and {@code ingestedAt} now. */
    public static Builder builder(String messageId, byte[] payload) {
        return new Builder(messageId, payload);
    }

    /**
     * A builder for a message without a payload ({@link #tombstone()} true, payload empty), with
     * every optional field empty and {@code ingestedAt} now.
     */
    public static Builder tombstoneBuilder(String messageId) {
        Builder builder = new Builder(messageId, new byte[0]);
        builder.tombstone = true;
        return builder;
    }

    /** Builds envelopes. */
    public static final class Builder {
        private final String messageId;
        private final byte[] payload;
        private boolean tombstone;
        private MessageKey key;
        private MessageKey orderingKey;
        private List<Header> headers = List.of();
        private Instant eventTime;
        private Instant ingestedAt = Instant.now();
        private int attempt = -1;
        private String traceparent;
        private String tracestate;
        private String cursor;
        private Attributes attributes = Attributes.empty();

        private Builder(String messageId, byte[] payload) {
            this.messageId = messageId;
            this.payload = payload;
        }

        /** The broker key; null for none. */
        public Builder key(MessageKey key) {
            this.key = key;
            return this;
        }

        /** The broker key, a copy of {@code key}; null for none. */
        public Builder key(byte[] key) {
            return key(key == null ? null : MessageKey.of(key));
        }

        /** The broker key, {@code key} in UTF-8; null for none. */
        public Builder key(String key) {
            return key(key == null ? null : MessageKey.ofUtf8(key));
        }

        /** The ordering key; null for none (unconstrained). */
        public Builder orderingKey(MessageKey orderingKey) {
            this.orderingKey = orderingKey;
            return this;
        }

        /** The ordering key, {@code orderingKey} in UTF-8; null for none (unconstrained). */
        public Builder orderingKey(String orderingKey) {
            return orderingKey(orderingKey == null ? null : MessageKey.ofUtf8(orderingKey));
        }

        /** The headers. */
        public Builder headers(List<Header> headers) {
            this.headers = headers;
            return this;
        }

        /** The event time. */
        public Builder eventTime(Instant eventTime) {
            this.eventTime = eventTime;
            return this;
        }

        /** The ingestion time. */
        public Builder ingestedAt(Instant ingestedAt) {
            this.ingestedAt = ingestedAt;
            return this;
        }

        /** The delivery attempt, from 0. */
        public Builder attempt(int attempt) {
            this.attempt = attempt;
            return this;
        }

        /** W3C trace context. */
        public Builder trace(String traceparent, String tracestate) {
            this.traceparent = traceparent;
            this.tracestate = tracestate;
            return this;
        }

        /** The source position. */
        public Builder cursor(String cursor) {
            this.cursor = cursor;
            return this;
        }

        /** The attributes for tracing; empty unless set. */
        public Builder attributes(Attributes attributes) {
            this.attributes = attributes;
            return this;
        }

        /** The envelope. */
        public Envelope build() {
            return new Envelope(messageId, key, orderingKey, headers, payload, tombstone, eventTime, ingestedAt,
                    attempt,
                    traceparent, tracestate, cursor, attributes);
        }
    }

    /**
     * One header.
     *
     * @param name the name
     * @param value the raw value
     */
    public record Header(String name, byte[] value) {}
}
