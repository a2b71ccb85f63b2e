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
     * what the source must still yield is yielded. Called exactly once: by the app's stop, while
     * acknowledgements of drained messages may still follow, or earlier, when the processor failed.
     */
    void shutdown() throws Exception;

    /**
     * Tells the source that its processor has ended (stopped, halted or failed): it pulls nothing
     * more and acknowledges nothing more, so a message handed out and not acknowledged by now never
     * will be (the source's broker delivers it again, to this group's next owner or after a restart).
     * A source that waits for acknowledgements after {@link #shutdown()} stops waiting; it may come
     * before or after {@code shutdown()}. Called once, from the processor's thread. Default: nothing.
     */
    default void processorEnded() {}

    /**
     * Tells the source, before its first {@link #poll}, how its processor orders what it takes, so a
     * source that redelivers a retried message may hold back only the messages that order puts
     * after it: under {@link Concurrency#serial()} every later message of its partition or stream,
     * under {@link Concurrency#orderedByKey(int)} the later messages of its ordering key, under
     * {@link Concurrency#unordered(int)} none. A source never told assumes {@code serial}. Called
     * once per processor by {@link ProcessingApp} when the processor starts. Default: nothing.
     */
    default void processedWith(Concurrency concurrency) {}
}
