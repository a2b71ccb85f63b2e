package dev.waymark.messaging.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Lets finalizers run until it is closed; {@link #close()} returns only once no finalizer is running
 * and none can start after it. A forced stop closes it, so no acknowledgement happens after the stop
 * returns.
 */
abstract sealed class FinalizeGate {

    /** A gate for finalizers that all run on one thread (serial processing): one fence per message. */
    static FinalizeGate singleThread() {
        return new SingleThread();
    }

    /** A gate for finalizers on many threads: a read lock per message. */
    static FinalizeGate manyThreads() {
        return new ManyThreads();
    }

    /** @return true when the caller may finalize and must call {@link #exit()}; false once closed */
    abstract boolean enter();

    /** Ends a finalization begun by a successful {@link #enter()}. */
    abstract void exit();

    /** Closes the gate and waits for finalizers already inside. */
    abstract void close();

    /**
     * Dekker's protocol on two volatile variables: the finalizing thread publishes {@code inside}
     * before it reads {@code closed}, the closer publishes {@code closed} before it reads {@code
     * inside}; volatile accesses are totally ordered, so at least one of them sees the other.
     */
    private static final class SingleThread extends FinalizeGate {
        private static final VarHandle INSIDE;

        static {
            try {
                INSIDE = MethodHandles.lookup().findVarHandle(SingleThread.class, "inside", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        @SuppressWarnings("unused") // accessed through INSIDE
        private volatile int inside;
        private volatile boolean closed;

        @Override
        boolean enter() {
            INSIDE.setVolatile(this, 1);
            if (closed) {
                INSIDE.setRelease(this, 0);
                return false;
            }
            return true;
        }

        @Override
        void exit() {
            INSIDE.setRelease(this, 0); // no later read depends on it: a release store is enough
        }

        @Override
        void close() {
            closed = true;
            for (int spins = 0; (int) INSIDE.getVolatile(this) == 1; spins++) {
                if (spins < 100) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(50_000); // an acknowledgement in flight: usually a round trip
                }
            }
        }
    }

    /** Finalizers hold the read lock; closing takes the write lock. */
    private static final class ManyThreads extends FinalizeGate {
        private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
        private volatile boolean closed;

        @Override
        boolean enter() {
            lock.readLock().lock();
            if (closed) {
                lock.readLock().unlock();
                return false;
            }
            return true;
        }

        @Override
        void exit() {
            lock.readLock().unlock();
        }

        @Override
        void close() {
            closed = true;
            lock.writeLock().lock(); // waits for finalizers already running
            lock.writeLock().unlock();
        }
    }
}
