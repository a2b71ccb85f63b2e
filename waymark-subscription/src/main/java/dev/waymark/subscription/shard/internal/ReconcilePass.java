package dev.waymark.subscription.shard.internal;

import dev.waymark.subscription.ConsumerGroupSizeMismatchException;
import dev.waymark.subscription.shard.ShardCountMismatchException;
import dev.waymark.subscription.shard.ShardListener;
import dev.waymark.subscription.shard.ShardOptions;
import dev.waymark.subscription.shard.ShardOwnership;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One reconcile pass of a sharded worker: heartbeat, count live workers and renew (one statement,
 * {@link LeaseStore#renewAndCount}), claim at most one
 * bucket, shed above the fair share (stopping the reader before giving up the lease), then bring
 * readers in line with the leases held. A failing step keeps the current readers running.
 *
 * <p>Balance rule, with {@code L} live workers: {@code floor = N / L}, {@code ceil = ceil(N / L)}.
 * A worker claims while it holds fewer than {@code floor}, or fewer than {@code ceil} when no other
 * live worker is below {@code floor}. It sheds down to {@code ceil}, and sheds one more from
 * {@code ceil} when another live worker is below {@code floor} and no bucket is free. A lone
 * worker never sheds. The pool settles with every worker at {@code floor} or {@code ceil}.
 */
public final class ReconcilePass {

    private static final Logger log = LoggerFactory.getLogger(ReconcilePass.class);

    private final LeaseStore leases;
    private final BucketReaders readers;
    private final String worker;
    private final int shardCount;
    private final ShardListener listener;
    private boolean claimedBelowFloor;
    /** Whether the bucket rows are known to exist with this worker's shard count. */
    private boolean shardsEnsured = true;
    /** The buckets held after the last pass that renewed. */
    private Set<Integer> previous = Set.of();

    /** A pass for {@code worker}. */
    public ReconcilePass(LeaseStore leases, BucketReaders readers, String worker, int shardCount,
            ShardListener listener) {
        this.leases = leases;
        this.readers = readers;
        this.worker = worker;
        this.shardCount = shardCount;
        this.listener = listener;
    }

    /**
     * Whether the worker is still below its floor share after the last pass: it then runs its next
     * pass sooner (still one claim per pass), so buckets freed by a crash or a shed are taken over
     * within moments of their leases expiring.
     */
    public boolean wantsEarlyPass() {
        return claimedBelowFloor;
    }

    /**
     * Creating the bucket rows failed at start (the database was unavailable): every pass tries it
     * first, and does nothing else until it succeeds.
     */
    public void ensureShardsFirst() {
        shardsEnsured = false;
    }

    /**
     * Runs the pass; returns the buckets held afterwards.
     *
     * @throws ShardCountMismatchException when the bucket rows, created at last by this pass after a
     *     failed start, hold another shard count: the worker must not run
     * @throws ConsumerGroupSizeMismatchException when, found at the same point, the subscription's
     *     checkpoints were written by a group of another size
     */
    public Set<Integer> run() {
        if (!shardsEnsured) {
            try {
                leases.ensureShards();
                shardsEnsured = true;
            } catch (ShardCountMismatchException | ConsumerGroupSizeMismatchException e) {
                failed("ensure shards", e);
                throw e;
            } catch (RuntimeException e) {
                failed("ensure shards", e);
                return Set.of(); // nothing is claimed, or read, before the rows are there
            }
        }
        Map<String, Integer> live;
        List<LeaseStore.Lease> held;
        try {
            LeaseStore.Renewal renewal = leases.renewAndCount(worker);
            live = new HashMap<>(renewal.others());
            held = renewal.held();
        } catch (RuntimeException e) {
            failed("renew", e);
            // keep what runs, and what drains while still held; the fence stops a reader whose lease is gone
            Set<Integer> kept = new TreeSet<>(readers.running());
            readers.draining().stream().filter(previous::contains).forEach(kept::add);
            return Set.copyOf(kept);
        }
        Map<Integer, Long> owned = new TreeMap<>();
        held.forEach(l -> owned.put(l.bucket(), l.epoch()));
        live.put(worker, owned.size());

        int workers = live.size();
        int floor = shardCount / workers;
        int ceil = ShardOptions.fairShare(shardCount, workers);
        boolean otherBelowFloor = live.entrySet().stream()
                .anyMatch(e -> !e.getKey().equals(worker) && e.getValue() < floor);
        int leased = live.values().stream().mapToInt(Integer::intValue).sum();

        claimedBelowFloor = false;
        if (owned.size() < floor || (owned.size() < ceil && !otherBelowFloor)) {
            try {
                for (LeaseStore.Lease l : leases.claim(worker, 1)) {

                    owned.put(l.bucket(), l.epoch());
                    safely(() -> listener.claimed(worker, l.bucket(), l.epoch()));
                }
            } catch (RuntimeException e) {
                failed("claim", e);
            }
        }

        List<Integer> shed = new ArrayList<>();
        if (workers > 1) {
            // a bucket whose reader is draining goes last: it cannot be given up before the reader ends
            Set<Integer> drainingNow = readers.draining();
            List<Integer> highestFirst = owned.keySet().stream()
                    .sorted(Comparator.comparing((Integer b) -> drainingNow.contains(b))
                            .thenComparing(Comparator.reverseOrder()))
                    .toList();
            int excess = owned.size() - ceil;
            if (excess <= 0 && owned.size() == ceil && ceil > floor && otherBelowFloor && leased >= shardCount) {
                excess = 1;
            }
            for (int i = 0; i < excess; i++) {
                shed.add(highestFirst.get(i));
            }
        }
        // Every reader that must go stops in one call, side by side (a pass waits at most twice the
        // stop grace, and the renewals with it): shed buckets, lost ones (a bucket held last pass, or
        // read, that this worker no longer holds) and those reclaimed at a new epoch after the lease
        // lapsed (the reader is fenced with the new one). A reader that does not stop keeps its bucket
        // (renewed by the passes) until it ends, so the next owner never overlaps a reader mid-event.
        Set<Integer> wasDraining = readers.draining();
        Set<Integer> lost = new TreeSet<>(previous);
        lost.addAll(readers.running());
        lost.removeAll(owned.keySet());
        List<Integer> refenced = owned.entrySet().stream().filter(e -> readers.running().contains(e.getKey())
                && readers.isAlive(e.getKey()) && readers.epochOf(e.getKey()) != e.getValue()).map(Map.Entry::getKey)
                .toList();
        Map<Integer, Long> heldEpochs = new HashMap<>();
        lost.forEach(b -> heldEpochs.put(b, readers.epochOf(b)));
        Set<Integer> stopping = new TreeSet<>(shed);
        stopping.addAll(lost);
        stopping.addAll(refenced);
        Set<Integer> stuck = stopping.isEmpty() ? Set.of() : readers.stop(stopping);
        List<Integer> stopped = shed.stream().filter(b -> !stuck.contains(b)).toList();
        if (!stopped.isEmpty()) {
            try {
                leases.relinquish(worker, stopped);
            } catch (RuntimeException e) {
                failed("relinquish", e); // the leases expire on their own; the readers are stopped
            }
        }
        for (int b : stopped) {
            owned.remove(b);
            safely(() -> listener.shed(worker, b));
        }
        if (!lost.isEmpty()) {
            logLost(lost, heldEpochs);
        }
        for (int b : lost) {
            safely(() -> listener.lost(worker, b));
        }
        Set<Integer> draining = readers.draining();
        for (int b : draining) {
            if (!wasDraining.contains(b)) {
                safely(() -> listener.readerStuck(worker, b));
            }
        }
        for (Map.Entry<Integer, Long> e : owned.entrySet()) {
            int b = e.getKey();
            long epoch = e.getValue();
            if (draining.contains(b)) {
                continue; // no second reader beside one that has not ended
            }
            if (!readers.running().contains(b)) {
                readers.start(b, epoch);
            } else if (!readers.isAlive(b)) {
                Throwable cause = readers.deathCause(b);
                readers.stop(b); // it has ended: returns at once
                readers.start(b, epoch);
                safely(() -> listener.readerRestarted(worker, b, cause));
            }
        }
        claimedBelowFloor = owned.size() < floor;
        Set<Integer> result = Set.copyOf(owned.keySet());
        previous = result;
        int liveCount = workers;
        safely(() -> listener.passCompleted(worker, result, liveCount));
        return result;
    }

    /**
     * One WARN line per lost bucket, with the lease as stored now: an expected event (a takeover
     * after a pause, an expiry), not an error.
     */
    private void logLost(Set<Integer> lost, Map<Integer, Long> heldEpochs) {
        Map<Integer, ShardOwnership> now = new HashMap<>();
        try {
            leases.snapshot().forEach(o -> now.put(o.bucket(), o));
        } catch (RuntimeException e) {
            log.debug("sharded worker {}: reading the leases of lost buckets failed: {}", worker, e.toString());
        }
        for (int b : lost) {
            long held = heldEpochs.getOrDefault(b, -1L);
            ShardOwnership o = now.get(b);
            String state = o == null
                    ? "its lease as stored now is unknown"
                    : o.owner().map(owner -> "now held by " + owner + " at epoch " + o.epoch()
                            + (o.live() ? "" : ", expired")).orElse("now free at epoch " + o.epoch());
            log.warn("sharded worker {} of '{}': lost bucket {} (held at epoch {}; {}); its reader stops", worker,
                    leases.subscription(), b, held < 0 ? "?" : held, state);
        }
    }

    private void failed(String step, RuntimeException e) {
        log.warn("sharded worker {}: {} failed: {}", worker, step, e.toString());
        safely(() -> listener.passFailed(worker, step, e));
    }

    /** Calls a listener method; what it throws is logged and ignored. */
    static void safely(Runnable call) {
        try {
            call.run();
        } catch (RuntimeException | LinkageError | AssertionError e) {
            log.warn("shard listener failed: {}", e.toString());
        }
    }
}
