package dev.waymark.subscription.internal;

import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Delivery;
import dev.waymark.subscription.LeaseFence;
import dev.waymark.subscription.SubscriptionConfig;
import dev.waymark.subscription.SubscriptionListener;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What a subscription's {@link HandlerWatch} reports: one log line and the listener's call. */
final class StuckHandlerReports implements HandlerWatch.Reports {

    private static final Logger log = LoggerFactory.getLogger(SubscriptionWorker.class);

    private final SubscriptionConfig config;
    private final SubscriptionListener listener;

    StuckHandlerReports(SubscriptionConfig config, SubscriptionListener listener) {
        this.config = config;
        this.listener = listener;
    }

    /** Who runs the handler: the subscription, or a pool's bucket and worker. */
    private String who() {
        LeaseFence f = config.fence();
        return f == null
                ? "subscription " + config.memberLabel()
                : "sharded pool '" + f.subscription() + "' bucket " + f.bucket() + " (worker " + f.owner() + ")";
    }

    @Override
    public void stuck(Delivery delivery, Duration running) {
        RecordedEvent e = delivery.event();
        log.warn("{}: the handler has not returned after {} ms on event {} ({}@{}, attempt {}), with no stop"
                + " requested (stuckHandlerThreshold {} ms); nothing moves on meanwhile", who(),
                running.toMillis(), e.eventId(), e.streamName(), e.streamVersion(), delivery.attempt() + 1,
                config.stuckHandlerThreshold().toMillis());
        safely(() -> listener.handlerStuck(config, delivery, running));
    }

    @Override
    public void returned(Delivery delivery, Duration took) {
        log.info("{}: the handler stuck on event {} returned after {} ms", who(), delivery.event().eventId(),
                took.toMillis());
        safely(() -> listener.handlerUnstuck(config, delivery, took));
    }

    private void safely(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | LinkageError | AssertionError e) {
            log.warn("subscription {}: listener failed: {}", config.memberLabel(), e.toString());
        }
    }
}
