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

    /** The payload. */
    public byte[] payload() {
        return envelope.payload();
    }

    /** The message id. */
    public String id() {
        return envelope.messageId();
    }
}
