package dev.waymark.workflow.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one stop of a long-lived workflow component, shared by every call of its {@code stop(Duration)}
 * as {@link dev.waymark.core.Stoppable} requires: the first call runs the stop; a concurrent or later
 * call starts none, waits (within its own timeout) for the first call's answer and, when that was
 * false, for what it left stopping in the background to end.
 */
public final class StopOnce {

    /**
     * How long a stop waits for the work it interrupted to end (its unwinding: a lease released, a
     * statement finished) before it answers false and leaves it ending in the background.
     */
    public static final Duration FORCED_STOP_WAIT = Duration.ofSeconds(10);

    /** The stop itself, run once: gives the work in flight up to the timeout, then stops it by force. */
    @FunctionalInterface
    public interface Stop {
        /** Answers whether everything had stopped when it returns. */
        boolean run(Duration timeout);
    }

    /** Waits for everything to have stopped. */
    @FunctionalInterface
    public interface Stopped {
        /** Waits up to {@code nanos} (zero: does not wait); answers whether everything has stopped. */
        boolean await(long nanos) throws InterruptedException;
    }

    private final String what;
    private final Stop stop;
    private final Stopped stopped;
    private final CompletableFuture<Boolean> answer = new CompletableFuture<>();
    private boolean begun;

    /** The stop of {@code what} (named in the message of a bad timeout). */
    public StopOnce(String what, Stop stop, Stopped stopped) {
        this.what = what;
        this.stop = stop;
        this.stopped = stopped;
    }

    /**
     * Runs the stop on the first call; on a later or concurrent call, answers for that stop.
     *
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    public boolean stop(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException(what + " stop timeout must be >= 0, got " + timeout);
        }
        Deadline deadline = Deadline.after(timeout);
        boolean first;
        synchronized (this) {
            first = !begun;
            begun = true;
        }
        if (first) {
            try {
                boolean done = stop.run(timeout);
                answer.complete(done);
                return done;
            } catch (RuntimeException | Error e) {
                answer.completeExceptionally(e);
                throw e;
            }
        }
        try {
            boolean done;
            try {
                done = answer.get(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException e) {
                done = false; // the first call threw it; what it left running may still end
            }
            return done || stopped.await(deadline.remainingNanos());
        } catch (TimeoutException e) {
            return false; // the first stop is still under way
        } catch (InterruptedException e) {
            boolean done = answer.isDone() && !answer.isCompletedExceptionally() && answer.join();
            try {
                done = done || stopped.await(0);
            } catch (InterruptedException again) {
                // the answer stays as it was
            }
            Thread.currentThread().interrupt();
            return done;
        }
    }
}
