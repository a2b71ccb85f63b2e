package dev.waymark.messaging;

/**
 * What an adapter yields: the envelope, its acknowledgement handle and an optional lease.
 *
 * @param envelope the message
 * @param ack how to acknowledge it
 * @param lease its visibility timeout, or null
 */
public record Ingested(Envelope envelope, AckHandle ack, Lease lease) {

    /** Validates. */
    public Ingested {
        if (envelope == null || ack == null) {
            throw new IllegalArgumentException("envelope and ack handle must not be null");
        }
    }

    /** Without a lease. */
    public static Ingested of(Envelope envelope, AckHandle ack) {
        return new Ingested(envelope, ack, null);
    }
}
