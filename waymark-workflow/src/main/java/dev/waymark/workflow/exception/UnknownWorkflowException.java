package dev.waymark.workflow.exception;

/** The workflow name is not registered with this engine or registry. */
public class UnknownWorkflowException extends InvalidWorkflowInputException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public UnknownWorkflowException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public UnknownWorkflowException(String message, Throwable cause) {
        super(message, cause);
    }
}
