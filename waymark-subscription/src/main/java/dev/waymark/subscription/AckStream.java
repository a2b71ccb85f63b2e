package dev.waymark.subscription;

import java.time.Duration;
import java.util.Optional;

/**
 * A pull-based view of a subscription: take a delivery, handle it, answer it. The subscription
 * waits for each answer before it moves on. Closing the stream stops the subscription and writes
 * no acknowledgement for an unanswered item.
 */
public interface AckStream extends AutoCloseable {

    /** A delivery waiting for its answer. */
    interface Item {
        /** The delivery. */
        Delivery delivery();

        /** Answers the delivery; the subscription then checkpoints, retries or dead-letters. */
        void reply(Ack ack);
    }

    /**
     * The next delivery, waiting up to {@code timeout}; empty on timeout.
     *
     * @throws SubscriptionException if the subscription stopped on an error, or the stream is closed
     */
    Optional<Item> next(Duration timeout) throws InterruptedException;

    /** The subscription behind the stream. */
    Subscription subscription();

    /** Stops the subscription at once; the item in flight is not acknowledged. */
    @Override
    void close();
}
