package dev.waymark.subscription.shard.internal;

import dev.waymark.store.EventStore;
import dev.waymark.store.StoreException;
import dev.waymark.subscription.ConsumerGroupSizeMismatchException;
import dev.waymark.subscription.shard.ShardCountMismatchException;
import dev.waymark.subscription.shard.ShardListener;
import dev.waymark.subscription.shard.ShardOptions;
import dev.waymark.subscription.shard.ShardOwnership;
import dev.waymark.subscription.shard.ShardStats;
import dev.waymark.subscription.shard.ShardedSubscription;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A sharded worker: runs a reconcile pass every renew interval until stopped. */
public final class ShardWorker implements ShardedSubscription {

    private static final Logger log = LoggerFactory.getLogger(ShardWorker.class);

    private final String name;
    private final String workerId;
    private final ShardOptions options;
    private final LeaseStore leases;
    private final SubscriptionReaders readers;
    private final ReconcilePass pass;
    private final ShardListener events;

    private final AtomicLong claims = new AtomicLong();
    private final AtomicLong sheds = new AtomicLong();
    private final AtomicLong losses = new AtomicLong();
    private final AtomicLong restarts = new AtomicLong();

    private volatile Set<Integer> owned = Set.of();
    private volatile boolean stopping;
    private volatile Thread loop;

    /** A worker; {@link #start()} runs it. */
    public ShardWorker(EventStore store, String name, String workerId, ShardOptions options,
            dev.waymark.subscription.shard.ShardHandler handler, ShardListener listener) {
        this.name = name;
        this.workerId = workerId;
        this.options = options;
        this.leases = new LeaseStore(store, name, options.shardCount(), options.leaseTtl());
        Duration grace = options.renewInterval().dividedBy(2).compareTo(Duration.ofSeconds(1)) < 0
                ? options.renewInterval().dividedBy(2)
                : Duration.ofSeconds(1);
        this.events = new Counting(listener);
        this.readers = new SubscriptionReaders(store, name, options, workerId, handler, grace, events);
        this.pass = new ReconcilePass(leases, readers, workerId, options.shardCount(), events);
    }

    /**
     * Creates the bucket rows (refusing a different shard count) and starts the pass loop. When the
     * database is unavailable (a retryable store error), the failure is reported to the listener as
     * the pass step {@code ensure shards} and the loop starts anyway: each pass retries it first.
     *
     * @throws ShardCountMismatchException on a different stored count
     * @throws ConsumerGroupSizeMismatchException when the subscription's checkpoints were written by a
     *     group of another size than the shard count
     * @throws StoreException on a store error that is not retryable (a schema not migrated, say)
     */
    public ShardWorker start() {
        try {
            leases.ensureShards();
        } catch (ShardCountMismatchException | ConsumerGroupSizeMismatchException e) {
            throw e;
        } catch (StoreException e) {
            if (!e.isRetryable()) {
                throw e;
            }
            log.warn("sharded worker {} of '{}': creating the bucket rows failed, every pass retries it: {}",
                    workerId, name, e.toString());
            pass.ensureShardsFirst();
            ReconcilePass.safely(() -> events.passFailed(workerId, "ensure shards", e));
        }
        loop = Thread.ofPlatform().name("waymark-shard-" + name + "-" + workerId).start(this::loop);
        return this;
    }

    private void loop() {
        long interval = options.renewInterval().toNanos();
        long planned = System.nanoTime();
        while (!stopping) {
            long late = System.nanoTime() - planned;
            if (late > options.leaseTtl().minus(options.renewInterval()).toNanos()) {
                // A pause this long (GC, starved thread) may have let leases expire: the renew below
                // returns only what is still ours, and fenced checkpoints stop readers of the rest.
                log.warn("sharded worker {} of '{}': pass ran {} ms late; re-verifying leases", workerId, name,
                        TimeUnit.NANOSECONDS.toMillis(late));
            }
            boolean early = false;
            try {
                owned = pass.run();
                early = pass.wantsEarlyPass();
            } catch (ShardCountMismatchException | ConsumerGroupSizeMismatchException e) {
                // found once the database came back after a failed start: this worker must not run
                log.error("sharded worker {} of '{}' stops: {}", workerId, name, e.getMessage());
                return;
            } catch (RuntimeException | Error e) {
                // an Error too: this loop renews the leases and restarts dead readers; if it ended,
                // the readers would lose their leases one by one and nothing would take over here
                log.error("sharded worker {} of '{}': pass failed", workerId, name, e);
            }
            planned = early ? System.nanoTime() + interval / 10 : planned + interval;
            long sleep = planned - System.nanoTime();
            if (sleep < 0) {
                planned = System.nanoTime();
                continue;
            }
            try {
                TimeUnit.NANOSECONDS.sleep(sleep);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    @Override
    public String workerId() {
        return workerId;
    }

    @Override
    public Set<Integer> ownedBuckets() {
        return owned;
    }

    @Override
    public List<ShardOwnership> ownership() {
        return leases.snapshot();
    }

    @Override
    public ShardStats stats() {
        return new ShardStats(owned.size(), claims.get(), sheds.get(), losses.get(), restarts.get(),
                readers.deliveries.get(), readers.retries.get(), readers.deadLetters.get(),
                Duration.ofNanos(readers.handlerNanos.get()), stuckReaders());
    }

    /** Buckets whose handler is stuck: stopped readers not ended, and handlers past the threshold. */
    private int stuckReaders() {
        Set<Integer> stuck = new java.util.HashSet<>(readers.draining());
        stuck.addAll(readers.stuckHandlers());
        return stuck.size();
    }

    @Override
    public boolean isRunning() {
        Thread t = loop;
        return t != null && t.isAlive();
    }

    @Override
    public boolean stop(Duration grace) {
        if (grace == null || grace.isNegative()) {
            throw new IllegalArgumentException("stop grace must be >= 0, got " + grace);
        }
        stopping = true;
        boolean loopEnded = true;
        Thread t = loop;
        if (t != null) {
            t.interrupt();
            try {
                loopEnded = t.join(grace.plusSeconds(10));
                if (!loopEnded) {
                    log.warn("sharded worker {} of '{}': pass loop did not stop in time", workerId, name);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                loopEnded = !t.isAlive();
            }
        }
        Set<Integer> wasDraining = readers.draining();
        Set<Integer> stuck;
        // The pass loop has ended: keep the leases of the readers finishing their deliveries renewed
        // for the grace, which may be longer than what is left of a lease; else another worker could
        // claim a bucket and deliver its event beside the handler still running here.
        CountDownLatch drained = new CountDownLatch(1);
        Thread keeper = Thread.ofPlatform().daemon().name("waymark-shard-keep-" + name + "-" + workerId)
                .start(() -> renewUntil(drained));
        try {
            stuck = readers.stopAll(grace);
        } finally {
            drained.countDown();
            joinQuietly(keeper);
        }
        if (!stuck.isEmpty()) {
            log.warn("sharded worker {} of '{}': readers of buckets {} did not stop; their leases are kept and expire"
                    + " in {} ms", workerId, name, stuck, options.leaseTtl().toMillis());
        }
        for (int b : stuck) {
            if (!wasDraining.contains(b)) {
                ReconcilePass.safely(() -> events.readerStuck(workerId, b));
            }
        }
        try {
            leases.leave(workerId, stuck);
        } catch (RuntimeException e) {
            log.warn("sharded worker {} of '{}': releasing leases failed; they expire in {} ms: {}", workerId, name,
                    options.leaseTtl().toMillis(), e.toString());
        }
        owned = Set.of();
        return loopEnded && stuck.isEmpty();
    }

    /** Renews this worker's leases every renew interval until {@code drained} opens. */
    private void renewUntil(CountDownLatch drained) {
        try {
            while (!drained.await(options.renewInterval().toNanos(), TimeUnit.NANOSECONDS)) {
                try {
                    leases.renew(workerId);
                } catch (RuntimeException e) {
                    log.warn("sharded worker {} of '{}': renewing leases while readers stop failed: {}", workerId,
                            name, e.toString());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void joinQuietly(Thread t) {
        boolean interrupted = false;
        while (t.isAlive()) {
            try {
                t.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Counts lifecycle events and forwards them. */
    private final class Counting implements ShardListener {
        private final ShardListener next;

        Counting(ShardListener next) {
            this.next = next;
        }

        @Override
        public void claimed(String workerId, int bucket, long epoch) {
            claims.incrementAndGet();
            next.claimed(workerId, bucket, epoch);
        }

        @Override
        public void shed(String workerId, int bucket) {
            sheds.incrementAndGet();
            next.shed(workerId, bucket);
        }

        @Override
        public void lost(String workerId, int bucket) {
            losses.incrementAndGet();
            next.lost(workerId, bucket);
        }

        @Override
        public void readerDied(String workerId, int bucket, Throwable cause) {
            next.readerDied(workerId, bucket, cause);
        }

        @Override
        public void readerRestarted(String workerId, int bucket, Throwable cause) {
            restarts.incrementAndGet();
            next.readerRestarted(workerId, bucket, cause);
        }

        @Override
        public void readerStuck(String workerId, int bucket) {
            next.readerStuck(workerId, bucket);
        }

        @Override
        public void handlerStuck(String workerId, int bucket, dev.waymark.store.RecordedEvent event,
                Duration running) {
            next.handlerStuck(workerId, bucket, event, running);
        }

        @Override
        public void handlerUnstuck(String workerId, int bucket, dev.waymark.store.RecordedEvent event,
                Duration took) {
            next.handlerUnstuck(workerId, bucket, event, took);
        }

        @Override
        public void passFailed(String workerId, String step, Throwable error) {
            next.passFailed(workerId, step, error);
        }

        @Override
        public void passCompleted(String workerId, Set<Integer> owned, int liveWorkers) {
            next.passCompleted(workerId, owned, liveWorkers);
        }
    }
}
