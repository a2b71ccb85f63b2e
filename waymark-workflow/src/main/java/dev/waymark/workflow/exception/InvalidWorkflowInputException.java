package dev.waymark.workflow.exception;

import dev.waymark.core.WaymarkInputException;

/**
 * Bad input to a workflow API (a name, an id, a payload over the size limit, an input the codec
 * cannot read); nothing was written. The workflow module's member of the
 * {@link WaymarkInputException} branch (no longer a {@link WorkflowException}).
 */
public class InvalidWorkflowInputException extends WaymarkInputException {

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
