package dev.waymark.workflow.exception;

import dev.waymark.core.WaymarkConfigException;
import java.io.Serial;

/**
 * An invalid workflow engine, client, resume worker or collector option; thrown when the value is set
 * or at {@code build()}, before anything runs. The message names the option, the value and the rule.
 * The workflow module's member of the {@link WaymarkConfigException} branch.
 */
public final class WorkflowConfigException extends WaymarkConfigException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid option described by {@code message}. */
    public WorkflowConfigException(String message) {
        super(message);
    }
}
