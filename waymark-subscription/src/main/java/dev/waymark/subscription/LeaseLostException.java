package dev.waymark.subscription;

import java.io.Serial;

/**
 * A fenced checkpoint write found that its writer no longer holds the lease (another worker
 * claimed the bucket, or the lease expired). Nothing was written; the writer must stop.
 */
public final class LeaseLostException extends SubscriptionException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The lease described by {@code fence} is gone. */
    public LeaseLostException(LeaseFence fence) {
        super("bucket " + fence.bucket() + " of subscription '" + fence.subscription() + "': lease lost by "
                + fence.owner() + " at epoch " + fence.epoch() + "; checkpoint not written");
    }
}
