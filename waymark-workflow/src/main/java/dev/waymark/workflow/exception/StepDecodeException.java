package dev.waymark.workflow.exception;

/** A journaled value cannot be read as the type the code asks for (the step's type changed in place). */
public class StepDecodeException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public StepDecodeException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public StepDecodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
