package dev.waymark.workflow.internal;

import dev.waymark.store.WakeSignal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs of one engine that wait in memory for a short durable sleep or an awakeable instead of
 * suspending at once. What the run waits for is journaled before it waits (the sleep's wake time;
 * the awakeable's id, with its row), so a crash of this process loses nothing: the instance stays
 * running under the run's lease, and once that expires a resume worker takes it over and replays
 * to the wait. Meanwhile the run keeps its lease and its thread and goes on in place when the sleep
 * ends or the awakeable is settled: no suspension, release, claim, reload of the journal or replay.
 * A wait not over within the hold's limit, or cut short by the engine's stop, suspends the instance
 * then, as it would have at once without the hold (or goes on, when the source resolved meanwhile).
 *
 * <p>Settlements made in this process poke the waiting run at once ({@link #poke}); those of other
 * processes reach it through the store's wake signal (their settlement signals it), on which one
 * checker thread reads in one statement which of the held awakeables are settled. The checker also
 * reads on the signal's fallback interval, so a lost notification delays a held run by at most that;
 * its checks are paced by how many awakeables each read ({@link #CHECK_PAUSE_NANOS_PER_AWAKEABLE}).
 */
public final class HeldWaits {

    private static final Logger log = LoggerFactory.getLogger(HeldWaits.class);

    /** How often the checker reads the held awakeables when no wake signal came. */
    static final Duration CHECK_FALLBACK = Duration.ofSeconds(1);
    /** Most awakeables read in one statement. */
    private static final int CHECK_CHUNK = 1_000;
    /**
     * The pause after a check, per awakeable it read: a check reads every held awakeable, so under a
     * stream of wake signals back-to-back checks would cost the database in proportion to the
     * number held times the signals' rate; paced so, they read at most about 100,000 awakeables a
     * second however many are held (a pause of 0.1 ms with 10 held, 10 ms with 1,000).
     */
    static final long CHECK_PAUSE_NANOS_PER_AWAKEABLE = 10_000;

    /** How a held wait ended. */
    enum End {
        /** Its time came: the sleep's end, or the hold's limit. */
        DUE,
        /** Something happened that may end it: a settlement, a cancellation; check. */
        POKED,
        /** The engine stops, or the thread was interrupted: leave the wait to the database. */
        RELEASED
    }

    private final Duration limit;
    private final int max;
    private final Awakeables awakeables;
    private final Supplier<WakeSignal> wakeSignal;
    private final String owner;
    private final ConcurrentHashMap<Instances.Key, Hold> byKey = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<UUID, Hold> byAwakeable = new ConcurrentHashMap<>();
    private final AtomicInteger count = new AtomicInteger();
    private volatile boolean closed;
    /** Guarded by {@code this}. */
    private Thread checker;

    /**
     * Holds of at most {@code limit} each and at most {@code max} at once ({@code limit} zero: none);
     * {@code wakeSignal} is asked for the store's signal when the first awakeable is held.
     */
    public HeldWaits(Duration limit, int max, Awakeables awakeables, Supplier<WakeSignal> wakeSignal, String owner) {
        this.limit = limit;
        this.max = max;
        this.awakeables = awakeables;
        this.wakeSignal = wakeSignal;
        this.owner = owner;
    }

    /** The longest a run waits in memory; zero when holding is off. */
    Duration limit() {
        return limit;
    }

    /** How many runs wait in memory now. */
    public int held() {
        return count.get();
    }

    /**
     * A hold for a run of {@code key} about to wait (on {@code awakeable}, or on a sleep when it is
     * null), or null when none can be had: holding is off, the engine stops, or {@code max} runs wait
     * already. An awakeable's hold reads its source after it is listed, so that no settlement goes
     * unheard.
     */
    Hold hold(Instances.Key key, UUID awakeable) {
        if (limit.isZero() || closed) {
            return null;
        }
        if (count.incrementAndGet() > max) {
            count.decrementAndGet();
            return null;
        }
        Hold h = new Hold(key, awakeable, Thread.currentThread());
        byKey.put(key, h);
        if (awakeable != null) {
            byAwakeable.put(awakeable, h);
            startChecker();
        }
        if (closed) { // a stop raced this hold: it may have missed the release
            h.poke();
        }
        return h;
    }

    /** Pokes the held run of {@code key}, if any; true if there was one. */
    public boolean poke(Instances.Key key) {
        Hold h = byKey.get(key);
        if (h != null) {
            h.poke();
        }
        return h != null;
    }

    /** Releases every held run (they leave their waits to the database) and takes no more. */
    public void close() {
        closed = true;
        byKey.values().forEach(Hold::poke);
        synchronized (this) {
            if (checker != null) {
                checker.interrupt();
            }
        }
    }

    private synchronized void startChecker() {
        if (checker == null && !closed) {
            WakeSignal wake = wakeSignal.get();
            checker = Thread.ofVirtual().name("waymark-workflow-held-" + owner).start(() -> check(wake));
        }
    }

    /** Reads which held awakeables are settled on every wake of the store (and on the fallback interval). */
    private void check(WakeSignal wake) {
        long seen = wake.generation();
        while (!closed) {
            try {
                wake.awaitAfter(seen, CHECK_FALLBACK);
            } catch (InterruptedException e) {
                return;
            }
            // taken before the read: a settlement that commits after the read signals after it, so
            // the next wait returns at once
            seen = wake.generation();
            if (byAwakeable.isEmpty()) {
                continue;
            }
            List<UUID> ids = new ArrayList<>(byAwakeable.keySet());
            for (int from = 0; from < ids.size() && !closed; from += CHECK_CHUNK) {
                try {
                    for (UUID settled : awakeables.settledAmong(ids.subList(from, Math.min(ids.size(),
                            from + CHECK_CHUNK)))) {
                        Hold h = byAwakeable.get(settled);
                        if (h != null) {
                            h.poke();
                        }
                    }
                } catch (RuntimeException e) {
                    // the held runs end their waits by their limit and go on through a resume worker
                    log.debug("waymark workflow: checking {} held awakeables failed", ids.size(), e);
                }
            }
            LockSupport.parkNanos(this, ids.size() * CHECK_PAUSE_NANOS_PER_AWAKEABLE); // close() unparks it
        }
    }

    /** One run's wait in memory; close it when the wait ends, however it ends. */
    final class Hold implements AutoCloseable {
        private final Instances.Key key;
        private final UUID awakeable;
        private final Thread thread;
        private volatile boolean poked;
        private boolean closedHold;

        private Hold(Instances.Key key, UUID awakeable, Thread thread) {
            this.key = key;
            this.awakeable = awakeable;
            this.thread = thread;
        }

        /**
         * Waits for up to {@code nanos}: the value of the source once it resolved (a sleep, {@code settles}
         * false: at its end; an awakeable: when a poke finds it settled), or null when the wait goes on
         * in the database (the hold's limit passed, the engine stops, the thread was interrupted). On
         * each poke {@code cancelled} runs first: it throws when a cancellation was heard of and the
         * row confirms it.
         */
        String resolve(long nanos, boolean settles, Supplier<String> value, Runnable cancelled) {
            long deadline = System.nanoTime() + nanos;
            if (settles) { // read once it is listed: a settlement after this read pokes it
                String v = value.get();
                if (v != null) {
                    return v;
                }
            }
            while (true) {
                switch (await(deadline)) {
                    case RELEASED -> {
                        return null;
                    }
                    case DUE -> {
                        return settles ? null : value.get(); // a settlement after this wakes the row's instance
                    }
                    case POKED -> {
                        cancelled.run();
                        String v = settles ? value.get() : null;
                        if (v != null) {
                            return v;
                        }
                    }
                }
            }
        }

        /** Waits until {@code deadlineNanos} ({@link System#nanoTime()}), a poke, the engine's stop or an interrupt. */
        End await(long deadlineNanos) {
            while (true) {
                if (closed) {
                    return End.RELEASED;
                }
                if (poked) {
                    poked = false;
                    return End.POKED;
                }
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0) {
                    return End.DUE;
                }
                LockSupport.parkNanos(this, left);
                if (Thread.currentThread().isInterrupted()) {
                    return End.RELEASED; // the flag stays set: the run ends as an interrupted one does
                }
            }
        }

        private void poke() {
            poked = true;
            LockSupport.unpark(thread);
        }

        @Override
        public void close() {
            if (closedHold) {
                return;
            }
            closedHold = true;
            byKey.remove(key, this);
            if (awakeable != null) {
                byAwakeable.remove(awakeable, this);
            }
            count.decrementAndGet();
        }
    }
}
