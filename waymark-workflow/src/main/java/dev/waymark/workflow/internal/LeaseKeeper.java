package dev.waymark.workflow.internal;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the instance leases of one owner alive while their runs go on: every third of the TTL one
 * statement extends all of them (database clock). A process that stops (or is paused) stops
 * renewing, so its leases expire and another worker takes over.
 */
public final class LeaseKeeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    private final Instances instances;
    private final String owner;
    private final Duration ttl;
    /**
     * How many runs hold each lease: an attempt that lost its lease may end while a new attempt of
     * the same instance under the same owner already runs, and its drop must not stop the renewals
     * the new one needs.
     */
    private final Map<Instances.Key, Integer> held = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    /** Renews the leases {@code owner} holds, extending them by {@code ttl}. */
    public LeaseKeeper(Instances instances, String owner, Duration ttl) {
        this.instances = instances;
        this.owner = owner;
        this.ttl = ttl;
        this.timer = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon()
                .name("waymark-workflow-lease-" + owner).factory());
        long period = Math.max(10, ttl.toMillis() / 3);
        timer.scheduleWithFixedDelay(this::renew, period, period, TimeUnit.MILLISECONDS);
    }

    /** The owner id written into lease rows. */
    public String owner() {
        return owner;
    }

    /** The lease TTL. */
    public Duration ttl() {
        return ttl;
    }

    /** Starts renewing the lease of {@code key} (for one more run of it). */
    public void hold(Instances.Key key) {
        held.merge(key, 1, Integer::sum);
    }

    /** Ends one run's hold of {@code key}; renewal stops when no run holds it. */
    public void drop(Instances.Key key) {
        held.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
    }

    private void renew() {
        List<Instances.Key> keys = List.copyOf(held.keySet());
        if (keys.isEmpty()) {
            return;
        }
        try {
            instances.leases().renew(owner, keys, ttl);
        } catch (RuntimeException | Error e) {
            // an Error too: a scheduled task that throws is never run again, and every lease of this
            // process would lapse while its runs go on
            log.warn("waymark workflow: renewing {} leases of {} failed; retrying in {} ms", keys.size(), owner,
                    ttl.toMillis() / 3, e);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
