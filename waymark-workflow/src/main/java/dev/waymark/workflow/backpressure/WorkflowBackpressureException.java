package dev.waymark.workflow.backpressure;

import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.exception.WorkflowException;

/**
 * {@link WorkflowEngine#start} waited its {@link Backpressure.MaxBacklog#maxWait()} and the runnable
 * backlog was still at its bound; nothing was written. Retrying later is safe (start is idempotent).
 * The message carries the backlog that refused the start.
 */
public final class WorkflowBackpressureException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    private final transient WorkflowBacklog backlog;

    /** Refused because of {@code backlog}. */
    public WorkflowBackpressureException(String message, WorkflowBacklog backlog) {
        super(message);
        this.backlog = backlog;
    }

    /** The last backlog sample the start saw. */
    public WorkflowBacklog backlog() {
        return backlog;
    }
}
