package dev.waymark.subscription;

import java.io.Serial;
import java.util.Optional;

/**
 * A fenced checkpoint write found that its writer no longer holds the lease (another worker
 * claimed the bucket, or the lease expired). Nothing was written; the writer must stop. An
 * expected event in a pool (a takeover after a pause, a rebalance), logged as one WARN line.
 */
public final class LeaseLostException extends SubscriptionException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String subscription;
    private final int bucket;
    private final String owner;
    private final long epoch;
    private final String currentOwner;
    private final long currentEpoch;

    /** The lease described by {@code fence} is gone; its current state is unknown. */
    public LeaseLostException(LeaseFence fence) {
        super("sharded pool '" + fence.subscription() + "', bucket " + fence.bucket() + ": worker " + fence.owner()
                + " lost its lease at epoch " + fence.epoch() + "; checkpoint not written");
        this.subscription = fence.subscription();
        this.bucket = fence.bucket();
        this.owner = fence.owner();
        this.epoch = fence.epoch();
        this.currentOwner = null;
        this.currentEpoch = -1;
    }

    /**
     * The lease described by {@code fence} is gone: the bucket's row now says {@code owner} (empty
     * when free) at {@code epoch}, a lease that is {@code live} or expired.
     */
    public LeaseLostException(LeaseFence fence, Optional<String> owner, long epoch, boolean live) {
        super("sharded pool '" + fence.subscription() + "', bucket " + fence.bucket() + ": worker " + fence.owner()
                + " lost its lease at epoch " + fence.epoch() + " (epoch " + fence.epoch() + " -> " + epoch + ", "
                + now(fence, owner, epoch, live) + "); checkpoint not written");
        this.subscription = fence.subscription();
        this.bucket = fence.bucket();
        this.owner = fence.owner();
        this.epoch = fence.epoch();
        this.currentOwner = owner.orElse(null);
        this.currentEpoch = epoch;
    }

    private static String now(LeaseFence fence, Optional<String> owner, long epoch, boolean live) {
        if (owner.isEmpty()) {
            return "the bucket is free";
        }
        if (owner.get().equals(fence.owner()) && epoch == fence.epoch()) {
            return "its lease expired by the database clock";
        }
        return "now held by " + owner.get() + (live ? "" : ", expired");
    }

    /** The lease the writer held. */
    public LeaseFence fence() {
        return new LeaseFence(subscription, bucket, owner, epoch);
    }

    /** The bucket's owner when the write was refused, if known and not free. */
    public Optional<String> currentOwner() {
        return Optional.ofNullable(currentOwner);
    }

    /** The bucket's epoch when the write was refused, or -1 if unknown. */
    public long currentEpoch() {
        return currentEpoch;
    }
}
