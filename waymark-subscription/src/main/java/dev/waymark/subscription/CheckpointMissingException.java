package dev.waymark.subscription;

import java.io.Serial;

/** A subscription started with {@link StartPosition#checkpointOrFail()} found no checkpoint. */
public final class CheckpointMissingException extends SubscriptionException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** No checkpoint for the subscription and member. */
    public CheckpointMissingException(String subscription, String member) {
        super("subscription '" + subscription + "' member " + member + " has no checkpoint and was started with"
                + " checkpointOrFail(); reset its checkpoint or start from the beginning or the end");
    }
}
