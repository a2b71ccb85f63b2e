package dev.waymark.messaging;

import java.time.Duration;

/** A visibility timeout a handler may extend (queue-style sources); absent for logs like Kafka. */
public interface Lease {

    /** The lease's id. */
    String id();

    /** Extends the lease by at least {@code extra}. */
    void extend(Duration extra) throws Exception;
}
