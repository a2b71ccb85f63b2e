package dev.waymark.workflow.awakeable;

import dev.waymark.workflow.exception.WorkflowException;

/** The awaited awakeable was cancelled. */
public class AwakeableCancelledException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public AwakeableCancelledException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public AwakeableCancelledException(String message, Throwable cause) {
        super(message, cause);
    }
}
