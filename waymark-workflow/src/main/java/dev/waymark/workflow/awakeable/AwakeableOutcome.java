package dev.waymark.workflow.awakeable;

import dev.waymark.workflow.WorkflowClient;

/** What completing, failing or cancelling an awakeable did. Only {@link #SETTLED} changed anything. */
public enum AwakeableOutcome {
    /** This call settled the awakeable and woke its workflow. */
    SETTLED,
    /** It had already been completed; the first value stands. */
    ALREADY_COMPLETED,
    /** It had already been failed. */
    ALREADY_FAILED,
    /** It had already been cancelled. */
    ALREADY_CANCELLED,
    /**
     * Nobody waits for it now: its generation was closed by continue-as-new, or its workflow ended.
     * Final, except for an awakeable of a failed workflow's current generation: a
     * {@link WorkflowClient#retry} of that workflow makes it pending again, so a value refused
     * while the workflow was failed must be sent again after the retry.
     */
    SUPERSEDED,
    /** No awakeable has this id. */
    UNKNOWN
}
