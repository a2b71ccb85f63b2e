package dev.waymark.messaging;

import java.time.Duration;
import java.util.Optional;

/**
 * The adapter SPI: a pull-based source of messages. The runtime pulls only when it has room (its
 * inbox bounds how far ahead it reads), so sources get backpressure for free.
 */
public interface MessageSource {

    /** A name for logs and metrics. */
    String name();

    /**
     * The next message, waiting up to {@code timeout}; empty when none arrived in time. Throwing
     * fails the processor after it has finalized what it already took.
     */
    Optional<Ingested> poll(Duration timeout) throws Exception;

    /** Whether the source has ended: no message will ever come again. */
    boolean isFinished();

    /**
     * Asks the source to end (graceful stop): after it, {@link #isFinished()} becomes true once
     * what the source must still yield is yielded. Called exactly once per stop, while
     * acknowledgements of drained messages may still follow.
     */
    void shutdown() throws Exception;
}
