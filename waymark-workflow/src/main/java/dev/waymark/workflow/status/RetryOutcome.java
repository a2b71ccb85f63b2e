package dev.waymark.workflow.status;

import dev.waymark.workflow.WorkflowClient;

/** What {@link WorkflowClient#retry} did. */
public enum RetryOutcome {
    /** The failed workflow is running again with a fresh attempt budget; its journal is kept. */
    RETRIED,
    /** It is not failed; nothing changed. */
    NOT_FAILED,
    /** No such workflow. */
    UNKNOWN
}
