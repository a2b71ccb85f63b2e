package dev.waymark.workflow.exception;

/** A start with an existing id but a different input; the existing instance is unchanged. */
public class WorkflowStartConflictException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public WorkflowStartConflictException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public WorkflowStartConflictException(String message, Throwable cause) {
        super(message, cause);
    }
}
