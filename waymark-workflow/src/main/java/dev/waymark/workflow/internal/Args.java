package dev.waymark.workflow.internal;

import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.WorkflowConfigException;

/** Argument checks shared by the public API, so a null fails as every other bad argument does. */
public final class Args {

    private Args() {}

    /**
     * {@code value}, if it is not null.
     *
     * @throws InvalidWorkflowInputException "{@code what} must not be null"
     */
    public static <T> T notNull(T value, String what) {
        if (value == null) {
            throw new InvalidWorkflowInputException(what + " must not be null");
        }
        return value;
    }

    /**
     * {@code value}, if it is not null: for builder and options values, where a null is a bad option.
     *
     * @throws WorkflowConfigException "{@code what} must not be null"
     */
    public static <T> T option(T value, String what) {
        if (value == null) {
            throw new WorkflowConfigException(what + " must not be null");
        }
        return value;
    }
}
