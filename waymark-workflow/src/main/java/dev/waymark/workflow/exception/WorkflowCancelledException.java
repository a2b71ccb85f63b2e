package dev.waymark.workflow.exception;

/** Awaiting a workflow that was cancelled. */
public class WorkflowCancelledException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public WorkflowCancelledException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public WorkflowCancelledException(String message, Throwable cause) {
        super(message, cause);
    }
}
