package dev.waymark.workflow.awakeable;

import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.exception.WorkflowException;

/** The awaited awakeable was failed by the party completing it; {@link #reason()} is what it said. */
public class AwakeableFailedException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    private final String reason;

    /** An awakeable failed with {@code reason}. */
    public AwakeableFailedException(String awakeable, String reason) {
        super("awakeable " + awakeable + " failed: " + reason);
        this.reason = reason;
    }

    /** The failure reason given to {@link WorkflowClient#failAwakeable}. */
    public String reason() {
        return reason;
    }
}
