package dev.waymark.subscription.internal;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.DeadLetter;
import dev.waymark.subscription.Delivery;
import dev.waymark.subscription.EventHandler;
import dev.waymark.subscription.SubscriptionConfig;
import dev.waymark.subscription.SubscriptionListener;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers one event to the handler until it is acknowledged: retries as the subscription's
 * {@link dev.waymark.core.RetryPolicy} says, dead-letters when the handler gives up on it or the
 * attempts run out, and leaves an event in flight unacknowledged when the subscription stops.
 */
final class EventDelivery {

    private static final Logger log = LoggerFactory.getLogger(SubscriptionWorker.class);

    private final EventStore store;
    private final SubscriptionConfig config;
    private final EventHandler handler;
    private final SubscriptionListener listener;
    private final CheckpointSql checkpoints;
    private final DeadLetterSql deadLetters;
    private final CheckpointCadence cadence;
    private final MemberPacing pacing;
    private final HandlerWatch watch;
    private final BooleanSupplier stopping;
    private final Runnable flush;
    private final Consumer<GlobalPosition> handled;

    /**
     * @param flush writes the checkpoint when it is due (a retried event does not hold back those before it)
     * @param handled told the position of a dead-lettered event (its checkpoint is written with the letter)
     */
    EventDelivery(EventStore store, SubscriptionConfig config, EventHandler handler, SubscriptionListener listener,
            CheckpointSql checkpoints, DeadLetterSql deadLetters, CheckpointCadence cadence, MemberPacing pacing,
            HandlerWatch watch, BooleanSupplier stopping, Runnable flush, Consumer<GlobalPosition> handled) {
        this.store = store;
        this.config = config;
        this.handler = handler;
        this.listener = listener;
        this.checkpoints = checkpoints;
        this.deadLetters = deadLetters;
        this.cadence = cadence;
        this.pacing = pacing;
        this.watch = watch;
        this.stopping = stopping;
        this.flush = flush;
        this.handled = handled;
    }

    /**
     * Delivers {@code event} until it is acknowledged or dead-lettered.
     *
     * @throws InterruptedException when the subscription stops first; the event is not acknowledged
     */
    void deliver(RecordedEvent event) throws InterruptedException {
        Throwable lastError = null; // the handler's last exception for this event, kept with a dead letter
        for (int attempt = 0;; attempt++) {
            Delivery delivery = new Delivery(config.name(), event, attempt, config.partition());
            Ack ack;
            try {
                watch.begin(delivery);
                try {
                    ack = handler.handle(delivery);
                } finally {
                    watch.end();
                }
                if (ack == null) {
                    throw new IllegalStateException("handler returned null instead of an Ack");
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception | Error e) {
                if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                    throw (Error) e; // out of memory, an internal error: not the event's fault
                }
                if (stopping.getAsBoolean()) {
                    // A handler that fails while the subscription stops (interrupted after the grace,
                    // often with the interrupt wrapped and its flag cleared) is not acknowledged: no
                    // retry counted, no dead letter, the event is delivered again after the restart.
                    throw new InterruptedException("stopped during the handler");
                }
                log.warn("subscription {}: handler failed on {} ({}@{}), attempt {}: {}", config.memberLabel(),
                        event.eventId(), event.streamName(), event.streamVersion(), attempt, e.toString());
                lastError = e;
                ack = Ack.retry(config.retry().delayBefore(attempt + 1, ThreadLocalRandom.current()));
            }
            clearStrayInterrupt();
            Ack decided = ack;
            pacing.safely(() -> listener.handled(config, delivery, decided));
            switch (ack) {
                case Ack.Ok ok -> {
                    return;
                }
                case Ack.DeadLetter dead -> {
                    deadLetter(event, dead.reason(), attempt + 1, dead.cause());
                    return;
                }
                case Ack.Retry retry -> {
                    if (stopping.getAsBoolean()) {
                        // A retry decided while stopping (often by a handler that caught the interrupt
                        // after the grace) is not final: nothing is counted or dead-lettered, and the
                        // event is delivered again after the restart.
                        throw new InterruptedException("stopped while the handler asked for a retry");
                    }
                    if (!config.retry().allowsAnotherAttempt(attempt + 1)) {
                        deadLetter(event, DeadLetterReason.maxAttempts(attempt + 1), attempt + 1, lastError);
                        return;
                    }
                    if (cadence.dueByTime()) {
                        flush.run();
                    }
                    pacing.pause(retry.delay());
                    if (stopping.getAsBoolean()) {
                        throw new InterruptedException("stopped while waiting to retry");
                    }
                }
            }
        }
    }

    /**
     * Clears an interrupt flag the handler left set while no stop asked for it ("restore the
     * interrupt" after catching one of its own): else the next wait would end the subscription as if
     * stopped. An interrupt from a stop comes only after {@code stopping} is set.
     */
    private void clearStrayInterrupt() {
        if (!stopping.getAsBoolean() && Thread.interrupted()) {
            log.warn("subscription {}: the handler left the thread's interrupt flag set; cleared",
                    config.memberLabel());
        }
    }

    private void deadLetter(RecordedEvent event, DeadLetterReason reason, int attempts, Throwable cause)
            throws InterruptedException {
        DeadLetter.HandlerError error = cause == null ? null : DeadLetter.HandlerError.of(cause);
        pacing.retrying("record dead letter", () -> Jdbc.autocommit(store, QueryPurpose.DEAD_LETTER,
                "dead-letter " + event.eventId() + " for " + config.memberLabel(), c -> {
                    deadLetters.insertAndSave(c, checkpoints, config.name(), config.partition(), event, reason,
                            attempts, error, config.fence());
                    return null;
                }));
        handled.accept(event.position());
        cadence.written(event.position());
        pacing.safely(() -> listener.deadLettered(config, event, reason, attempts));
    }
}
