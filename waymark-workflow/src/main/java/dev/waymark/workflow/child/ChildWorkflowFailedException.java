package dev.waymark.workflow.child;

import dev.waymark.workflow.exception.WorkflowException;

/** The awaited child workflow failed; {@link #reason()} is its recorded failure reason. */
public class ChildWorkflowFailedException extends WorkflowException {

    private static final long serialVersionUID = 1L;

    private final String childName;
    private final String childId;
    private final String reason;

    /** Child {@code childName}/{@code childId} failed with {@code reason}. */
    public ChildWorkflowFailedException(String childName, String childId, String reason) {
        super("child workflow " + childName + "/" + childId + " failed: " + reason);
        this.childName = childName;
        this.childId = childId;
        this.reason = reason;
    }

    /** The child's workflow name. */
    public String childName() {
        return childName;
    }

    /** The child's workflow id. */
    public String childId() {
        return childId;
    }

    /** The child's failure reason. */
    public String reason() {
        return reason;
    }
}
