package dev.waymark.workflow.status;

import dev.waymark.workflow.WorkflowClient;

/** What {@link WorkflowClient#cancel} did. */
public enum CancelOutcome {
    /** This call cancelled the workflow (and asked its live children to cancel). */
    CANCELLED,
    /** It had already completed; nothing changed. */
    ALREADY_COMPLETED,
    /** It had already been cancelled; nothing changed. */
    ALREADY_CANCELLED,
    /** It had already failed; nothing changed. */
    ALREADY_FAILED,
    /** No such workflow; nothing was created. */
    UNKNOWN
}
