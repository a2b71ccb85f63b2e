package dev.waymark.subscription.internal;

import dev.waymark.subscription.Delivery;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The watchdog of one subscription's handler calls: a call that has not returned {@code threshold}
 * after it began, with no stop requested, is reported once as stuck, and its return after that is
 * reported too. Runs on a virtual thread of its own, which checks at least every quarter of the
 * threshold; beginning and ending a call cost two volatile writes.
 */
final class HandlerWatch {

    /** What the watchdog reports. */
    interface Reports {
        /** The call has been running for {@code running}. */
        void stuck(Delivery delivery, Duration running);

        /** A call reported stuck returned after {@code took}. */
        void returned(Delivery delivery, Duration took);
    }

    private static final int RUNNING = 0;
    private static final int STUCK = 1;
    private static final int DONE = 2;

    /** One handler call; {@code state} is guarded by the call itself. */
    private static final class Call {
        final Delivery delivery;
        final long started = System.nanoTime();
        int state = RUNNING;

        Call(Delivery delivery) {
            this.delivery = delivery;
        }
    }

    private final long threshold;
    private final long idleCheck;
    private final BooleanSupplier stopRequested;
    private final Reports reports;
    private final Thread thread;
    private volatile Call current;
    private volatile boolean closed;

    /** Starts the watchdog, named {@code name}. */
    HandlerWatch(String name, Duration threshold, BooleanSupplier stopRequested, Reports reports) {
        this.threshold = threshold.toNanos();
        this.idleCheck = Math.max(this.threshold / 4, TimeUnit.MILLISECONDS.toNanos(5));
        this.stopRequested = stopRequested;
        this.reports = reports;
        this.thread = Thread.ofVirtual().name(name).start(this::watch);
    }

    /** A handler call on {@code delivery} begins. */
    void begin(Delivery delivery) {
        current = new Call(delivery);
    }

    /** The call begun last has returned (or thrown); reports it if it was reported stuck. */
    void end() {
        Call call = current;
        current = null;
        if (call == null) {
            return;
        }
        int was;
        synchronized (call) {
            was = call.state;
            call.state = DONE;
            if (was == STUCK) { // under the lock: never before the stuck report it follows
                reports.returned(call.delivery, Duration.ofNanos(System.nanoTime() - call.started));
            }
        }
    }

    /** Ends the watchdog. */
    void close() {
        closed = true;
        LockSupport.unpark(thread);
    }

    private void watch() {
        while (!closed) {
            Call call = current;
            long wait = idleCheck;
            if (call != null) {
                long running = System.nanoTime() - call.started;
                if (running >= threshold) {
                    synchronized (call) {
                        if (call.state == RUNNING && !stopRequested.getAsBoolean()) {
                            call.state = STUCK;
                            reports.stuck(call.delivery, Duration.ofNanos(running));
                        }
                    }
                } else {
                    wait = Math.min(wait, threshold - running);
                }
            }
            LockSupport.parkNanos(this, wait);
        }
    }
}
