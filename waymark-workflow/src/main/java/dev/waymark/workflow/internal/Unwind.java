package dev.waymark.workflow.internal;

import dev.waymark.workflow.WorkflowStatus;

/**
 * Control flow that leaves a workflow body without being an error of it: suspension, a terminal
 * state reached elsewhere, continue-as-new. An {@link Error} so that a body catching
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
