package dev.waymark.workflow;

import java.util.Objects;

/**
 * What one run of a workflow body ended with. A run either finishes the workflow (completed,
 * failed, cancelled), parks it until a wake source resolves (suspended), or closes its generation
 * and opens the next (continued as new).
 *
 * @param <R> the workflow's result type
 */
public sealed interface WorkflowOutcome<R> {

    /** The body returned {@code result}; it is stored and the workflow is terminal. */
    record Completed<R>(R result) implements WorkflowOutcome<R> {}

    /** The run is parked; {@code waitingOn} names the wake source ("sleep cool-off until ...", "awakeable ..."). */
    record Suspended<R>(String waitingOn) implements WorkflowOutcome<R> {
        /** Validates. */
        public Suspended {
            Objects.requireNonNull(waitingOn, "waitingOn");
        }
    }

    /**
     * The workflow failed with {@code reason}; nothing runs it again unless an operator revives it
     * with {@link WorkflowClient#retry}.
     */
    record Failed<R>(String reason) implements WorkflowOutcome<R> {
        /** Validates. */
        public Failed {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /** The workflow was cancelled. */
    record Cancelled<R>() implements WorkflowOutcome<R> {}

    /** The generation closed; {@code generation} is the new one, which runs next with the seed as its input. */
    record ContinuedAsNew<R>(int generation) implements WorkflowOutcome<R> {}

    /** Whether this outcome ends the workflow. */
    default boolean isTerminal() {
        return this instanceof Completed || this instanceof Failed || this instanceof Cancelled;
    }
}
