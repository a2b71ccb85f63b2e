package dev.waymark.workflow;

import java.time.Duration;

/**
 * Whether {@link WorkflowEngine#start} waits for the runnable backlog ({@link WorkflowBacklog#runnable()})
 * to fall below a bound before it starts a workflow: intake slows down to the speed at which
 * workflows finish, instead of the backlog, and with it start-to-finish latency, growing without
 * bound. Set with {@link WorkflowEngine.Builder#backpressure}.
 */
public sealed interface Backpressure {

    /** No bound: {@code start} never waits (the default). */
    static Backpressure off() {
        return new Off();
    }

    /**
     * {@code start} waits while {@code maxRunnable} or more instances are runnable, for up to
     * {@code maxWait}, then throws {@link WorkflowBackpressureException} (nothing is written: a
     * subscription handler that lets it escape is retried later, which slows the subscription down).
     *
     * @throws InvalidWorkflowInputException if {@code maxRunnable} is below 1 or {@code maxWait} is
     *     null or negative
     */
    static Backpressure maxBacklog(long maxRunnable, Duration maxWait) {
        return new MaxBacklog(maxRunnable, maxWait);
    }

    /** No bound. */
    record Off() implements Backpressure {}

    /**
     * A bound on the runnable backlog. Starts are admitted against the last sample plus the starts
     * admitted since it, so a single starting thread never pushes the backlog to the bound; starting
     * threads that race may overshoot it by at most their number.
     *
     * @param maxRunnable starts wait while this many instances or more are runnable (at least 1)
     * @param maxWait how long one start waits before it throws {@link WorkflowBackpressureException}
     */
    record MaxBacklog(long maxRunnable, Duration maxWait) implements Backpressure {
        /** Validates both. */
        public MaxBacklog {
            if (maxRunnable < 1) {
                throw new InvalidWorkflowInputException("backpressure maxRunnable must be >= 1, got " + maxRunnable);
            }
            if (maxWait == null || maxWait.isNegative()) {
                throw new InvalidWorkflowInputException("backpressure maxWait must be >= 0, got " + maxWait);
            }
        }
    }
}
