package dev.waymark.workflow.backpressure;

import java.time.Duration;
import java.time.Instant;

/**
 * The runnable workflow backlog of a schema, as sampled from the database: how much work is due and
 * how long the oldest of it has waited for a worker. Workflows waiting on an awakeable or a child
 * without a deadline, and sleeps not yet due, are not runnable and are not counted.
 *
 * @param runnable instances runnable now: running (in flight in any process included) or suspended
 *     with a due wake time
 * @param sleeping instances suspended until a wake time still ahead (a durable sleep, a deadline)
 * @param waiting those of them no live worker holds (unleased, or with an expired lease) and not paced
 *     by a crash backoff: work that waits for a resume worker
 * @param oldestWaiting how long the oldest waiting instance has been due (zero if none waits)
 * @param pendingAwakeables awakeables waiting for completion, across all workflows
 * @param inFlightHere attempts running in the process that sampled this (its engine's runs and its
 *     resume workers' attempts)
 * @param sampledAt the database time of the sample
 */
public record WorkflowBacklog(long runnable, long sleeping, long waiting, Duration oldestWaiting,
        long pendingAwakeables,
        long inFlightHere, Instant sampledAt) {

    /** Checks the components: counts are never negative, the age and time never null. */
    public WorkflowBacklog {
        if (runnable < 0 || sleeping < 0 || waiting < 0 || pendingAwakeables < 0 || inFlightHere < 0) {
            throw new IllegalArgumentException("backlog counts must be >= 0, got runnable " + runnable + ", sleeping "
                    + sleeping + ", waiting "
                    + waiting + ", pending awakeables " + pendingAwakeables + ", in flight " + inFlightHere);
        }
        if (oldestWaiting == null || oldestWaiting.isNegative() || sampledAt == null) {
            throw new IllegalArgumentException("oldestWaiting must be >= 0 and sampledAt set, got " + oldestWaiting
                    + " and " + sampledAt);
        }
    }

    /**
     * The work whose progress waits only on workers and time: {@code runnable + sleeping}. Only a start,
     * a settled awakeable or a finished child adds to it, so it is what backpressure bounds.
     */
    public long total() {
        return runnable + sleeping;
    }

    /**
     * Whether this backlog is within {@code bound}: always for {@link Backpressure#off()}; for a
     * {@link Backpressure.MaxBacklog}, a {@link #total()} below its {@code maxBacklog}.
     */
    public boolean within(Backpressure bound) {
        return switch (bound) {
            case Backpressure.Off off -> true;
            case Backpressure.MaxBacklog max -> total() < max.maxBacklog();
        };
    }
}
