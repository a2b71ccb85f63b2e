package dev.waymark.subscription.micrometer;

import dev.waymark.subscription.shard.ShardStats;
import dev.waymark.subscription.shard.ShardedSubscription;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Micrometer meters of a sharded worker, tagged {@code subscription} and {@code worker}, read from
 * {@link ShardedSubscription#stats()}: owned buckets and stuck readers (gauges); claims, sheds, losses, reader restarts,
 * deliveries, retries and dead letters (counters); handler time (function timer).
 */
public final class ShardMetrics {

    private ShardMetrics() {}

    /** Registers the meters of {@code worker} of the pool {@code subscription}. */
    public static ShardedSubscription bind(ShardedSubscription worker, String subscription, MeterRegistry registry) {
        Tags tags = Tags.of("subscription", subscription, "worker", worker.workerId());
        Gauge.builder("waymark.shard.owned", worker, w -> w.stats().ownedBuckets()).tags(tags).register(registry);
        Gauge.builder("waymark.shard.stuck_readers", worker, w -> w.stats().stuckReaders()).tags(tags)
                .register(registry);
        counter(registry, worker, tags, "waymark.shard.claims", ShardStats::claims);
        counter(registry, worker, tags, "waymark.shard.sheds", ShardStats::sheds);
        counter(registry, worker, tags, "waymark.shard.losses", ShardStats::losses);
        counter(registry, worker, tags, "waymark.shard.reader_restarts", ShardStats::readerRestarts);
        counter(registry, worker, tags, "waymark.shard.deliveries", ShardStats::deliveries);
        counter(registry, worker, tags, "waymark.shard.retries", ShardStats::retries);
        counter(registry, worker, tags, "waymark.shard.dead_letters", ShardStats::deadLetters);
        FunctionTimer.builder("waymark.shard.handler", worker, w -> w.stats().deliveries(),
                w -> w.stats().handlerTime().toNanos(), TimeUnit.NANOSECONDS)
                .tags(tags).register(registry);
        return worker;
    }

    private static void counter(MeterRegistry registry, ShardedSubscription worker, Tags tags, String name,
            ToDoubleFunction<ShardStats> value) {
        FunctionCounter.builder(name, worker, w -> value.applyAsDouble(w.stats())).tags(tags).register(registry);
    }
}
