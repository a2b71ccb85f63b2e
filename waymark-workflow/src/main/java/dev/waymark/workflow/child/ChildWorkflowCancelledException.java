package dev.waymark.workflow.child;

import dev.waymark.workflow.exception.WorkflowException;

/** The awaited child workflow was cancelled. */
public class ChildWorkflowCancelledException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public ChildWorkflowCancelledException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public ChildWorkflowCancelledException(String message, Throwable cause) {
        super(message, cause);
    }
}
