package dev.waymark.subscription.micrometer;

import dev.waymark.store.DeadLetterReason;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Delivery;
import dev.waymark.subscription.SubscriptionConfig;
import dev.waymark.subscription.SubscriptionListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Micrometer meters of plain subscriptions, as a {@link SubscriptionListener}: deliveries by
 * outcome, dead letters by reason kind, checkpoint writes and failures (counters), and handlers
 * stuck past the subscription's {@code stuckHandlerThreshold} (the gauge
 * {@code waymark.subscription.stuck_handlers}, 0 or 1 per member), tagged {@code subscription}
 * and {@code member}. Register it with {@code Subscription.builder(...).listener(new SubscriptionMetrics(registry))}.
 */
public final class SubscriptionMetrics implements SubscriptionListener {

    private final MeterRegistry registry;
    private final Map<Tags, AtomicInteger> stuck = new ConcurrentHashMap<>();

    /** Meters into {@code registry}. */
    public SubscriptionMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    private Tags tags(SubscriptionConfig config) {
        return Tags.of("subscription", config.name(), "member", config.partition().toString());
    }

    private AtomicInteger stuck(SubscriptionConfig config) {
        return stuck.computeIfAbsent(tags(config), t -> registry.gauge("waymark.subscription.stuck_handlers", t,
                new AtomicInteger()));
    }

    @Override
    public void started(SubscriptionConfig config, GlobalPosition position) {
        stuck(config); // the gauge shows 0 from the start, not from the first stuck handler
    }

    @Override
    public void handlerStuck(SubscriptionConfig config, Delivery delivery, Duration running) {
        stuck(config).incrementAndGet();
    }

    @Override
    public void handlerUnstuck(SubscriptionConfig config, Delivery delivery, Duration took) {
        stuck(config).decrementAndGet();
    }

    @Override
    public void handled(SubscriptionConfig config, Delivery delivery, Ack ack) {
        String outcome = switch (ack) {
            case Ack.Ok ok -> "ok";
            case Ack.Retry r -> "retry";
            case Ack.DeadLetter d -> "dead_letter";
        };
        Counter.builder("waymark.subscription.deliveries").tags(tags(config)).tag("outcome", outcome)
                .register(registry).increment();
    }

    @Override
    public void deadLettered(SubscriptionConfig config, RecordedEvent event, DeadLetterReason reason, int attempts) {
        Counter.builder("waymark.subscription.dead_letters").tags(tags(config)).tag("reason", reason.kind())
                .register(registry).increment();
    }

    @Override
    public void checkpointed(SubscriptionConfig config, GlobalPosition position) {
        Counter.builder("waymark.subscription.checkpoints").tags(tags(config)).register(registry).increment();
    }

    @Override
    public void failed(SubscriptionConfig config, Throwable error) {
        Counter.builder("waymark.subscription.failures").tags(tags(config)).register(registry).increment();
    }
}
