package dev.waymark.subscription.shard.internal;

import dev.waymark.store.EventStore;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.DeadLetterReason;
import dev.waymark.subscription.Delivery;
import dev.waymark.subscription.LeaseFence;
import dev.waymark.subscription.StartPosition;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.SubscriptionConfig;
import dev.waymark.subscription.SubscriptionListener;
import dev.waymark.subscription.shard.ShardDelivery;
import dev.waymark.subscription.shard.ShardHandler;
import dev.waymark.subscription.shard.ShardOptions;
import dev.waymark.store.RecordedEvent;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One {@link Subscription} per owned bucket: consumer-group member {@code bucket} of N, lease-fenced. */
public final class SubscriptionReaders implements BucketReaders {

    private static final Logger log = LoggerFactory.getLogger(SubscriptionReaders.class);

    private record Reader(Subscription subscription, long epoch) {}

    private final EventStore store;
    private final String name;
    private final ShardOptions options;
    private final String worker;
    private final ShardHandler handler;
    private final Duration stopGrace;
    private final Map<Integer, Reader> readers = new ConcurrentHashMap<>();

    final AtomicLong deliveries = new AtomicLong();
    final AtomicLong retries = new AtomicLong();
    final AtomicLong deadLetters = new AtomicLong();
    final AtomicLong handlerNanos = new AtomicLong();

    /** Readers for {@code worker} of the pool {@code name}. */
    public SubscriptionReaders(EventStore store, String name, ShardOptions options, String worker,
            ShardHandler handler, Duration stopGrace) {
        this.store = store;
        this.name = name;
        this.options = options;
        this.worker = worker;
        this.handler = handler;
        this.stopGrace = stopGrace;
    }

    @Override
    public Set<Integer> running() {
        return Set.copyOf(readers.keySet());
    }

    @Override
    public boolean isAlive(int bucket) {
        Reader r = readers.get(bucket);
        return r != null && r.subscription().isRunning();
    }

    @Override
    public Throwable deathCause(int bucket) {
        Reader r = readers.get(bucket);
        return r == null ? null : r.subscription().failure().orElse(null);
    }

    @Override
    public long epochOf(int bucket) {
        Reader r = readers.get(bucket);
        return r == null ? -1 : r.epoch();
    }

    @Override
    public void start(int bucket, long epoch) {
        Subscription subscription = Subscription.builder(store, name, options.target())
                .consumerGroup(bucket, options.shardCount())
                .fence(new LeaseFence(name, bucket, worker, epoch))
                .batchSize(options.batchSize())
                .retry(options.maxAttempts(), options.handlerRetryDelay())
                .startFrom(StartPosition.checkpointOrBeginning())
                .listener(new Counting())
                .start(d -> handle(d, epoch));
        readers.put(bucket, new Reader(subscription, epoch));
    }

    @Override
    public void stop(int bucket) {
        Reader r = readers.remove(bucket);
        if (r != null) {
            r.subscription().stop(stopGrace);
        }
    }

    /**
     * Stops the readers of {@code buckets} side by side: a reader whose handler ignores its
     * interrupt holds its stop for the grace and ten seconds more, and one after the other, a few
     * of them would hold the reconcile pass (and with it every renewal) for their sum.
     */
    @Override
    public void stop(Collection<Integer> buckets) {
        List<Reader> stopping = buckets.stream().map(readers::remove).filter(Objects::nonNull).toList();
        List<Thread> stoppers = stopping.stream().map(r -> Thread.ofVirtual().name("waymark-shard-stop")
                .start(() -> stopQuietly(r))).toList();
        // Waits even when interrupted (a worker's stop interrupts its pass): the caller gives up the
        // leases next, and the next owner must not overlap a reader still mid-event. The wait is
        // bounded: each stop returns within its grace and ten seconds.
        boolean interrupted = false;
        for (Thread t : stoppers) {
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void stopQuietly(Reader r) {
        try {
            r.subscription().stop(stopGrace);
        } catch (RuntimeException | Error e) {
            log.warn("sharded worker {} of '{}': stopping a reader failed: {}", worker, name, e.toString());
        }
    }

    /** Stops every reader, side by side. */
    public void stopAll() {
        stop(Set.copyOf(readers.keySet()));
    }

    private Ack handle(Delivery d, long epoch) throws Exception {
        long start = System.nanoTime();
        try {
            return handler.handle(new ShardDelivery(d.event(), d.attempt(), d.partition().member(), epoch));
        } finally {
            deliveries.incrementAndGet();
            handlerNanos.addAndGet(System.nanoTime() - start);
        }
    }

    private final class Counting implements SubscriptionListener {
        @Override
        public void handled(SubscriptionConfig config, Delivery delivery, Ack ack) {
            if (ack instanceof Ack.Retry) {
                retries.incrementAndGet();
            }
        }

        @Override
        public void deadLettered(SubscriptionConfig config, RecordedEvent event, DeadLetterReason reason, int attempts) {
            deadLetters.incrementAndGet();
        }
    }
}
