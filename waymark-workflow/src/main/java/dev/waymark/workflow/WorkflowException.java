package dev.waymark.workflow;

/** Base of the workflow module's exceptions; the message carries the state that explains it. */
public class WorkflowException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public WorkflowException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public WorkflowException(String message, Throwable cause) {
        super(message, cause);
    }
}
