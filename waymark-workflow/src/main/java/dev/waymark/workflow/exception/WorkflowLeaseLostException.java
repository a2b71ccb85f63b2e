package dev.waymark.workflow.exception;

/** The run lost its instance lease (another worker took it over); it stopped without journaling further. */
public class WorkflowLeaseLostException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public WorkflowLeaseLostException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public WorkflowLeaseLostException(String message, Throwable cause) {
        super(message, cause);
    }
}
