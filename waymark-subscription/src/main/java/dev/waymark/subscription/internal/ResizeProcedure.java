package dev.waymark.subscription.internal;

/**
 * The resize procedure of docs/OPERATIONS.md ("Resizing"), spelled out for one subscription, for
 * the messages of the exceptions that refuse a start with another group size or shard count.
 */
public final class ResizeProcedure {

    private ResizeProcedure() {}

    /**
     * The steps that take {@code subscription} to {@code size} members (buckets when {@code pool}).
     */
    public static String steps(String subscription, int size, boolean pool) {
        String s = subscription.replace("'", "''");
        String j = subscription.replace("\\", "\\\\").replace("\"", "\\\"");
        return "To resize, follow docs/OPERATIONS.md, \"Resizing\": 1. stop every " + (pool ? "worker" : "member")
                + " of '" + subscription + "'" + (pool
                        ? " and check that `waymark shards status --subscription "
                                + subscription + "` shows every bucket free"
                        : "")
                + "; 2. note the smallest checkpoint position P of"
                + " its members (`waymark subscriptions status --subscription " + subscription + " --json`); 3. in one"
                + " transaction, delete its " + (pool
                        ? "shard and checkpoint rows (`DELETE FROM waymark.shards"
                                + " WHERE subscription = '" + s
                                + "'; DELETE FROM waymark.checkpoints WHERE subscription = '" + s
                                + "';`"
                        : "checkpoint rows (`DELETE FROM waymark.checkpoints WHERE subscription = '" + s + "';`")
                + ", in the store's schema); 4. for each new member i in 0.." + (size - 1) + ", run"
                + " `Checkpoints.of(store).reset(\"" + j + "\", Partition.of(i, " + size + "), P)`; 5. start every "
                + (pool ? "worker with shards(" + size + ")" : "member with consumerGroup(i, " + size + ")")
                + ". Events between P and each old member's checkpoint are delivered again";
    }
}
