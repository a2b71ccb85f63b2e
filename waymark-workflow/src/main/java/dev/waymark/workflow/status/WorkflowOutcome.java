package dev.waymark.workflow.status;

import dev.waymark.workflow.WorkflowClient;
import java.util.Objects;

/**
 * What one run of a workflow body ended with. A run either finishes the workflow (completed,
 * failed, cancelled), parks it until a wake source resolves (suspended), or closes its generation
 * and opens the next (continued as new).
 *
 * @param <R> the workflow's result type
 */
public sealed interface WorkflowOutcome<R> {

    /**
     * The body returned {@code result}; it is stored and the workflow is terminal.
     *
     * @param result what the body returned (decoded from its journaled form)
     * @param <R> the workflow's result type
     */
    record Completed<R>(R result) implements WorkflowOutcome<R> {}

    /**
     * The run is parked until its wake source resolves.
     *
     * @param waitingOn names the wake source ("sleep cool-off until ...", "awakeable ...")
     * @param <R> the workflow's result type
     */
    record Suspended<R>(String waitingOn) implements WorkflowOutcome<R> {
        /** Validates. */
        public Suspended {
            Objects.requireNonNull(waitingOn, "waitingOn");
        }
    }

    /**
     * The workflow failed with {@code reason}; nothing runs it again unless an operator revives it
     * with {@link WorkflowClient#retry}.
     *
     * @param reason why it failed (the last crash's error after the crash budget was spent, or
     *     the reason it was marked failed)
     * @param <R> the workflow's result type
     */
    record Failed<R>(String reason) implements WorkflowOutcome<R> {
        /** Validates. */
        public Failed {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * The workflow was cancelled.
     *
     * @param <R> the workflow's result type
     */
    record Cancelled<R>() implements WorkflowOutcome<R> {}

    /**
     * The generation closed, and the next one runs with the seed as its input.
     *
     * @param generation the new generation
     * @param <R> the workflow's result type
     */
    record ContinuedAsNew<R>(int generation) implements WorkflowOutcome<R> {}

    /** Whether this outcome ends the workflow. */
    default boolean isTerminal() {
        return this instanceof Completed || this instanceof Failed || this instanceof Cancelled;
    }
}
