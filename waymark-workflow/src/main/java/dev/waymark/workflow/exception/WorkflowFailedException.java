package dev.waymark.workflow.exception;

/** Awaiting a workflow that failed; the message holds its failure reason. */
public class WorkflowFailedException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public WorkflowFailedException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public WorkflowFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
