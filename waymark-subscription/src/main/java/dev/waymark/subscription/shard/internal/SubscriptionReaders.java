package dev.waymark.subscription.shard.internal;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Delivery;
import dev.waymark.subscription.LeaseFence;
import dev.waymark.subscription.LeaseLostException;
import dev.waymark.subscription.StartPosition;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.SubscriptionConfig;
import dev.waymark.subscription.SubscriptionListener;
import dev.waymark.subscription.shard.ShardDelivery;
import dev.waymark.subscription.shard.ShardHandler;
import dev.waymark.subscription.shard.ShardListener;
import dev.waymark.subscription.shard.ShardOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** One {@link Subscription} per owned bucket: consumer-group member {@code bucket} of N, lease-fenced. */
public final class SubscriptionReaders implements BucketReaders {

    private static final Logger log = LoggerFactory.getLogger(SubscriptionReaders.class);

    /**
     * A running reader; {@code stopRequested} is set before it is asked to stop, so that its end
     * tells a stop from a death.
     */
    private record Reader(Subscription subscription, long epoch, AtomicBoolean stopRequested) {}

    private final EventStore store;
    private final String name;
    private final ShardOptions options;
    private final String worker;
    private final ShardHandler handler;
    private final Duration stopGrace;
    private final ShardListener listener;
    private final Map<Integer, Reader> readers = new ConcurrentHashMap<>();
    /** Readers stopped whose threads have not ended (a handler ignoring its interrupt). */
    private final Map<Integer, Reader> draining = new ConcurrentHashMap<>();
    /** Buckets whose handler runs longer than the stuck threshold, with no stop requested, and on what. */
    private final Map<Integer, RecordedEvent> stuckHandlers = new ConcurrentHashMap<>();

    final AtomicLong deliveries = new AtomicLong();
    final AtomicLong retries = new AtomicLong();
    final AtomicLong deadLetters = new AtomicLong();
    final AtomicLong handlerNanos = new AtomicLong();

    /** Readers for {@code worker} of the pool {@code name}, reporting nothing. */
    public SubscriptionReaders(EventStore store, String name, ShardOptions options, String worker,
            ShardHandler handler, Duration stopGrace) {
        this(store, name, options, worker, handler, stopGrace, ShardListener.NONE);
    }

    /** Readers for {@code worker} of the pool {@code name}; a reader's death is reported to {@code listener}. */
    public SubscriptionReaders(EventStore store, String name, ShardOptions options, String worker,
            ShardHandler handler, Duration stopGrace, ShardListener listener) {
        this.store = store;
        this.name = name;
        this.options = options;
        this.worker = worker;
        this.handler = handler;
        this.stopGrace = stopGrace;
        this.listener = listener;
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
        AtomicBoolean stopRequested = new AtomicBoolean();
        Subscription subscription = Subscription.builder(store, name, options.target())
                .consumerGroup(bucket, options.shardCount())
                .fence(new LeaseFence(name, bucket, worker, epoch))
                .batchSize(options.batchSize())
                .retry(options.retry())
                .stuckHandlerThreshold(options.stuckHandlerThreshold())
                .startFrom(StartPosition.checkpointOrBeginning())
                .listener(new Counting(bucket, stopRequested))
                .start(d -> handle(d, epoch));
        readers.put(bucket, new Reader(subscription, epoch, stopRequested));
    }

    @Override
    public boolean stop(int bucket) {
        return !stop(List.of(bucket)).contains(bucket);
    }

    /**
     * Stops the readers of {@code buckets} side by side (each gets the stop grace, is interrupted,
     * and gets the grace once more), so the wait is that of the slowest, not the sum, and never
     * longer than twice the grace: the pass that waits must go on renewing the leases. A reader
     * still running then (a handler that ignores its interrupt, or one that obeys it but needs longer
     * than the grace to end and write its checkpoint) is kept as draining until it ends.
     */
    @Override
    public Set<Integer> stop(Collection<Integer> buckets) {
        return stop(buckets, stopGrace, false);
    }

    /**
     * Stops every reader as {@link #stop(Collection)}, each handler given {@code grace} first, and
     * waits as long for readers already draining; returns the buckets still draining.
     */
    public Set<Integer> stopAll(Duration grace) {
        Set<Integer> all = new TreeSet<>(readers.keySet());
        all.addAll(draining.keySet());
        return stop(all, grace, true);
    }

    private Set<Integer> stop(Collection<Integer> buckets, Duration grace, boolean awaitDraining) {
        long deadline = System.nanoTime() + grace.plus(stopGrace).toNanos();
        Map<Integer, Reader> stopping = new TreeMap<>();
        List<Reader> waitFor = new ArrayList<>();
        for (int b : buckets) {
            Reader r = readers.remove(b);
            if (r != null) {
                r.stopRequested().set(true);
                // draining from the moment it leaves the running readers until it has ended, so that a
                // concurrent stopAll (a worker's stop racing its pass) never sees it in neither
                draining.put(b, r);
                stopping.put(b, r);
                waitFor.add(r);
                Thread.ofVirtual().name("waymark-shard-stop").start(() -> stopQuietly(r, grace));
            } else {
                Reader d = awaitDraining ? draining.get(b) : null;
                if (d != null) {
                    waitFor.add(d);
                }
            }
        }
        // Waits even when interrupted (a worker's stop interrupts its pass): the caller gives up the
        // leases of the buckets not reported as draining next, and the next owner must not overlap a
        // reader still mid-event.
        boolean interrupted = false;
        for (Reader r : waitFor) {
            while (r.subscription().isRunning()) {
                long left = deadline - System.nanoTime();
                try {
                    if (left <= 0 || r.subscription().awaitTermination(Duration.ofNanos(left))) {
                        break;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Set<Integer> stillDraining = draining();
        stopping.keySet().stream().filter(stillDraining::contains).forEach(b -> log.warn("sharded worker {} of '{}':"
                + " the reader of bucket {} did not stop within {} ms of its interrupt (its handler ignores interrupts);"
                + " the bucket's lease is kept until it ends", worker, name, b, stopGrace.toMillis()));
        return new TreeSet<>(buckets.stream().filter(stillDraining::contains).toList());
    }

    /** Asks the reader to stop: it finishes its delivery within {@code grace} or is interrupted. */
    private void stopQuietly(Reader r, Duration grace) {
        try {
            r.subscription().stop(grace);
        } catch (RuntimeException | Error e) {
            log.warn("sharded worker {} of '{}': stopping a reader failed: {}", worker, name, e.toString());
        }
    }

    /** Buckets whose handler has run longer than the stuck threshold, with no stop requested, and not returned. */
    public Set<Integer> stuckHandlers() {
        return Set.copyOf(stuckHandlers.keySet());
    }

    @Override
    public Set<Integer> draining() {
        draining.values().removeIf(r -> !r.subscription().isRunning());
        return Set.copyOf(draining.keySet());
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

    /** Counts a reader's retries and dead letters, and reports its death. */
    private final class Counting implements SubscriptionListener {
        private final int bucket;
        private final AtomicBoolean stopRequested;

        Counting(int bucket, AtomicBoolean stopRequested) {
            this.bucket = bucket;
            this.stopRequested = stopRequested;
        }

        @Override
        public void stopped(SubscriptionConfig config, GlobalPosition position, Throwable error) {
            if (!stopRequested.get()) {
                if (!(error instanceof LeaseLostException)) { // the reader logged that one itself, with the state
                    log.warn("sharded worker {} of '{}': the reader of bucket {} died: {}", worker, name, bucket,
                            error == null ? "it ended without an error" : error.toString());
                }
                ReconcilePass.safely(() -> listener.readerDied(worker, bucket, error));
            }
        }

        @Override
        public void handled(SubscriptionConfig config, Delivery delivery, Ack ack) {
            if (ack instanceof Ack.Retry) {
                retries.incrementAndGet();
            }
        }

        @Override
        public void deadLettered(SubscriptionConfig config, RecordedEvent event, DeadLetterReason reason,
                int attempts) {
            deadLetters.incrementAndGet();
        }

        @Override
        public void handlerStuck(SubscriptionConfig config, Delivery delivery, Duration running) {
            stuckHandlers.put(bucket, delivery.event());
            ReconcilePass.safely(() -> listener.handlerStuck(worker, bucket, delivery.event(), running));
        }

        @Override
        public void handlerUnstuck(SubscriptionConfig config, Delivery delivery, Duration took) {
            stuckHandlers.remove(bucket, delivery.event());
            ReconcilePass.safely(() -> listener.handlerUnstuck(worker, bucket, delivery.event(), took));
        }
    }
}
