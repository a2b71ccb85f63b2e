package dev.waymark.subscription.shard;

import dev.waymark.subscription.SubscriptionException;
import dev.waymark.subscription.internal.ResizeProcedure;
import java.io.Serial;
import java.util.List;

/**
 * A worker was started with a shard count that differs from the one stored for its subscription.
 * Mixed counts would deliver events twice and skip others, so the worker refuses to start, and
 * leaves no row of its own count behind. The message names the stored count (never the refused
 * one) and the steps of the resize procedure (docs/OPERATIONS.md, "Resizing").
 */
public final class ShardCountMismatchException extends SubscriptionException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String subscription;
    private final int configured;
    private final int[] stored;

    /** The configured count differs from the stored ones. */
    public ShardCountMismatchException(String subscription, int configured, List<Integer> stored) {
        super("sharded subscription '" + subscription + "' was started with " + configured + " shards but is stored"
                + " with " + (stored.size() == 1 ? stored.get(0) : "counts " + stored) + ", so this worker does not"
                + " start (start it with shards(" + stored.get(0) + ") to join the pool). "
                + ResizeProcedure.steps(subscription, configured, true));
        this.subscription = subscription;
        this.configured = configured;
        this.stored = stored.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The pool. */
    public String subscription() {
        return subscription;
    }

    /** The shard count the worker was started with. */
    public int configured() {
        return configured;
    }

    /** The shard counts stored for the pool, ascending. */
    public List<Integer> stored() {
        return java.util.Arrays.stream(stored).boxed().toList();
    }
}
