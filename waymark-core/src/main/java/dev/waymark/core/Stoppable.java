package dev.waymark.core;

import java.time.Duration;

/**
 * The lifecycle contract of every long-lived Waymark component (subscriptions, sharded pools,
 * processing apps, Kafka sources, workflow engines, resume workers and workflow collectors): it
 * runs from the moment it is built or started until {@link #stop(Duration)} or {@link #close()}.
 *
 * <p>Guarantees of every implementation:
 * <ul>
 *   <li>{@code stop(timeout)} stops taking new work and gives the work in flight up to {@code
 *       timeout} to finish; what still runs then is stopped by force (interrupted, abandoned
 *       unacknowledged so that it is delivered again) as the component documents, which takes at
 *       most a short, documented time more. It answers whether the component had fully stopped when
 *       the call returns: {@code false} means something still runs (a handler that ignores its
 *       interrupt, a broker that does not answer) and goes on stopping in the background.</li>
 *   <li>It is idempotent and thread-safe: a second or concurrent call never starts a second stop;
 *       it answers for the same one.</li>
 *   <li>An interrupt of the caller while it waits ends the wait: the call answers whether everything
 *       had stopped by then, and the interrupt flag stays set.</li>
 *   <li>{@link #close()} is {@code stop(}{@link #DEFAULT_CLOSE_TIMEOUT}{@code )} unless the
 *       component documents another timeout; it throws no checked exception, so the component
 *       works in try-with-resources.</li>
 * </ul>
 */
public interface Stoppable extends AutoCloseable {

    /** The timeout {@link #close()} gives {@link #stop(Duration)}: 30 s. */
    Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    /**
     * Stops, giving the work in flight up to {@code timeout} to finish before it is stopped by force.
     *
     * @param timeout how long work in flight may take to finish; zero stops it by force at once
     * @return whether the component had fully stopped when the call returns
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    boolean stop(Duration timeout);

    /** {@link #stop(Duration)} with {@link #DEFAULT_CLOSE_TIMEOUT}. */
    @Override
    default void close() {
        stop(DEFAULT_CLOSE_TIMEOUT);
    }
}
