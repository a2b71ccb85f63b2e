package dev.waymark.store;

import java.time.Duration;

/**
 * The lifecycle contract of every long-lived Waymark component (subscriptions, sharded pools,
 * processing apps, Kafka sources, workflow engines and resume workers): it runs from the moment it
 * is built or started until {@link #stop(Duration)} or {@link #close()}.
 *
 * <p>Guarantees of every implementation:
 * <ul>
 *   <li>{@code stop(timeout)} begins an orderly stop (in-flight work finishes or is interrupted as the
 *       component documents), waits up to {@code timeout}, and answers whether the component had
 *       fully stopped by then. {@code false} means something still runs: the stop goes on in the
 *       background and a later call may answer {@code true}.</li>
 *   <li>It is idempotent and thread-safe: a second or concurrent call never starts a second stop;
 *       it waits up to its own timeout for the same one and answers for it.</li>
 *   <li>An interrupt of the caller while it waits ends the wait: the call answers {@code false} (or
 *       {@code true} if everything had stopped) and the interrupt flag stays set.</li>
 *   <li>{@link #close()} is {@code stop(}{@link #DEFAULT_CLOSE_TIMEOUT}{@code )} unless the
 *       component documents another timeout; it throws no checked exception, so the component
 *       works in try-with-resources.</li>
 * </ul>
 */
public interface Stoppable extends AutoCloseable {

    /** The timeout {@link #close()} gives {@link #stop(Duration)}: 30 s. */
    Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

    /**
     * Stops, waiting up to {@code timeout} for the component to finish stopping.
     *
     * @param timeout how long to wait; zero only starts the stop
     * @return whether the component had fully stopped within {@code timeout}
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    boolean stop(Duration timeout);

    /** {@link #stop(Duration)} with {@link #DEFAULT_CLOSE_TIMEOUT}. */
    @Override
    default void close() {
        stop(DEFAULT_CLOSE_TIMEOUT);
    }
}
