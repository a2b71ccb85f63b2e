package dev.waymark.workflow.internal;

import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.WorkflowConfigException;
import java.time.Duration;

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

    /**
     * {@code retention}, if it is not null or negative.
     *
     * @throws InvalidWorkflowInputException naming the bad value
     */
    public static Duration retention(Duration retention) {
        notNull(retention, "retention");
        if (retention.isNegative()) {
            throw new InvalidWorkflowInputException("retention must not be negative, got " + retention);
        }
        return retention;
    }

    /**
     * {@code value}, if it is in [1, 10000].
     *
     * @throws InvalidWorkflowInputException naming it {@code what}
     */
    public static int inRange(int value, String what) {
        if (value < 1 || value > 10_000) {
            throw new InvalidWorkflowInputException(what + " must be in [1, 10000], got " + value);
        }
        return value;
    }

    /**
     * {@code bytes}, if it is a valid payload limit (at least {@link WorkflowClient#MIN_MAX_PAYLOAD_BYTES}).
     *
     * @throws WorkflowConfigException naming the bad value
     */
    public static int maxPayloadBytes(int bytes) {
        if (bytes < WorkflowClient.MIN_MAX_PAYLOAD_BYTES) {
            throw new WorkflowConfigException(
                    "maxPayloadBytes must be >= " + WorkflowClient.MIN_MAX_PAYLOAD_BYTES + ", got " + bytes);
        }
        return bytes;
    }
}
