package dev.waymark.workflow;

/** Bad input to a workflow API (a name, id, payload or option); nothing was written. */
public class InvalidWorkflowInputException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public InvalidWorkflowInputException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public InvalidWorkflowInputException(String message, Throwable cause) {
        super(message, cause);
    }
}
