package dev.waymark.workflow.internal;

import dev.waymark.workflow.status.WorkflowStatus;

/**
 * Control flow that leaves a workflow body without being an error of it: suspension, a terminal
 * state reached elsewhere, continue-as-new, a failure no retry can cure. An {@link Error} so that a body catching
 * {@code Exception} cannot swallow it; no stack trace, it is not a failure.
 */
abstract sealed class Unwind extends Error {

    private static final long serialVersionUID = 1L;

    Unwind(String message) {
        super(message, null, false, false);
    }

    /** The run parked on a wake source. */
    static final class Suspend extends Unwind {
        private static final long serialVersionUID = 1L;

        Suspend(String waitingOn) {
            super(waitingOn);
        }
    }

    /** The instance became terminal while this run was going (cancelled or failed by someone else). */
    static final class Terminal extends Unwind {
        private static final long serialVersionUID = 1L;
        final WorkflowStatus status;

        Terminal(WorkflowStatus status) {
            super("workflow is " + status.sqlValue());
            this.status = status;
        }
    }

    /**
     * The run cannot succeed on any attempt (a step's result that can never be journaled): the
     * workflow is failed now, without the retries a crash gets. An unwind, so that a body catching
     * {@code Exception} cannot go on past the step (its action would run again on every replay).
     */
    static final class Fail extends Unwind {
        private static final long serialVersionUID = 1L;
        /** What the failure reports. */
        final transient RuntimeException error;

        Fail(RuntimeException error) {
            super(error.getMessage());
            this.error = error;
        }
    }

    /** The body asked to continue as new with this seed (JSON). */
    static final class Rotate extends Unwind {
        private static final long serialVersionUID = 1L;
        final String seed;

        Rotate(String seed) {
            super("continue as new");
            this.seed = seed;
        }
    }
}
