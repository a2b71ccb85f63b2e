package dev.waymark.messaging;

import java.util.Optional;

/**
 * What a handler sees: the envelope and, if the source has one, the lease. It has no
 * acknowledgement handle: handlers decide, the runtime acknowledges.
 *
 * @param envelope the message
 * @param lease its lease, if any
 */
public record Message(Envelope envelope, Optional<Lease> lease) {

    /** The payload; empty for a {@link #tombstone()}. */
    public byte[] payload() {
        return envelope.payload();
    }

    /** The key exactly as the source holds it, or null when the message has none (not the same as an empty key). */
    public MessageKey key() {
        return envelope.key();
    }

    /** Whether the message has no payload at all (a Kafka null value) rather than an empty one. */
    public boolean tombstone() {
        return envelope.tombstone();
    }

    /** The message id. */
    public String id() {
        return envelope.messageId();
    }
}
