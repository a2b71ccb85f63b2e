package dev.waymark.workflow.backpressure;

import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowEngineBuilder;
import dev.waymark.workflow.exception.WorkflowConfigException;
import java.time.Duration;

/**
 * Whether {@link WorkflowEngine#start} waits for the backlog ({@link WorkflowBacklog#total()}: runnable
 * and sleeping instances, the work that waits only on workers and time) to fall below a bound before it starts a workflow: intake slows down to the speed at which
 * workflows finish, instead of the backlog, and with it start-to-finish latency, growing without
 * bound. Set with {@link WorkflowEngineBuilder#backpressure}.
 */
public sealed interface Backpressure {

    /** No bound: {@code start} never waits (the default). */
    static Backpressure off() {
        return new Off();
    }

    /**
     * {@code start} waits while the backlog ({@link WorkflowBacklog#total()}) is {@code maxBacklog} or more (so that
     * its own start does not take it past {@code maxBacklog}), for up to
     * {@code maxWait}, then throws {@link WorkflowBackpressureException} (nothing is written: a
     * subscription handler that lets it escape is retried later, which slows the subscription down).
     *
     * @throws WorkflowConfigException if {@code maxBacklog} is below 1 or {@code maxWait} is
     *     null or negative
     */
    static Backpressure maxBacklog(long maxBacklog, Duration maxWait) {
        return new MaxBacklog(maxBacklog, maxWait);
    }

    /** No bound. */
    record Off() implements Backpressure {}

    /**
     * A bound on the backlog. Starts are admitted against the last sample plus the starts admitted
     * since it, so a single starting thread never pushes the backlog past the bound; starting threads that
     * race may overshoot it by about their number, and awakeables settled meanwhile add what they wake.
     *
     * @param maxBacklog starts wait while the backlog ({@link WorkflowBacklog#total()}) is this or more
     *     (at least 1)
     * @param maxWait how long one start waits before it throws {@link WorkflowBackpressureException}
     */
    record MaxBacklog(long maxBacklog, Duration maxWait) implements Backpressure {
        /** Validates both. */
        public MaxBacklog {
            if (maxBacklog < 1) {
                throw new WorkflowConfigException("backpressure maxBacklog must be >= 1, got " + maxBacklog);
            }
            if (maxWait == null || maxWait.isNegative()) {
                throw new WorkflowConfigException("backpressure maxWait must be >= 0, got " + maxWait);
            }
        }
    }
}
