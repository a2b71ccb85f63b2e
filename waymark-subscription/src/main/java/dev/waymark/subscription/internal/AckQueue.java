package dev.waymark.subscription.internal;

import dev.waymark.subscription.Ack;
import dev.waymark.subscription.AckStream;
import dev.waymark.subscription.Delivery;
import dev.waymark.subscription.EventHandler;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.SubscriptionException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** The bridge behind {@link AckStream}: the subscription's handler hands items over and waits for answers. */
public final class AckQueue implements EventHandler, AckStream {

    private record QueuedItem(Delivery delivery, CompletableFuture<Ack> answer) implements Item {
        @Override
        public void reply(Ack ack) {
            if (ack == null) {
                throw new IllegalArgumentException("ack must not be null");
            }
            answer.complete(ack);
        }
    }

    private final BlockingQueue<QueuedItem> queue;
    private volatile Subscription subscription;
    private volatile boolean closed;

    /** A bridge with room for {@code buffer} items. */
    public AckQueue(int buffer) {
        this.queue = new ArrayBlockingQueue<>(buffer);
    }

    /** Binds the running subscription. */
    public void attach(Subscription subscription) {
        this.subscription = subscription;
    }

    @Override
    public Ack handle(Delivery delivery) throws Exception {
        QueuedItem item = new QueuedItem(delivery, new CompletableFuture<>());
        queue.put(item);
        try {
            return item.answer().get();
        } catch (ExecutionException e) {
            throw new SubscriptionException("ack stream answer failed", e.getCause());
        }
    }

    @Override
    public Optional<Item> next(Duration timeout) throws InterruptedException {
        if (closed) {
            throw new SubscriptionException("ack stream is closed");
        }
        QueuedItem item = queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (item == null) {
            Subscription s = subscription;
            if (s != null && !s.isRunning()) {
                Throwable failure = s.failure().orElse(null);
                throw new SubscriptionException("subscription " + s.config().memberLabel() + " has stopped"
                        + (failure == null ? "" : ": " + failure), failure);
            }
        }
        return Optional.ofNullable(item);
    }

    @Override
    public Subscription subscription() {
        return subscription;
    }

    @Override
    public void close() {
        closed = true;
        Subscription s = subscription;
        if (s != null) {
            s.stop(Duration.ZERO);
        }
        queue.clear();
    }
}
