package dev.waymark.subscription.shard;

import dev.waymark.subscription.SubscriptionException;
import java.io.Serial;
import java.util.List;

/**
 * A worker was started with a shard count that differs from the one stored for its subscription.
 * Mixed counts would deliver events twice and skip others, so the worker refuses to start.
 */
public final class ShardCountMismatchException extends SubscriptionException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The configured count differs from the stored ones. */
    public ShardCountMismatchException(String subscription, int configured, List<Integer> stored) {
        super("sharded subscription '" + subscription + "' was started with " + configured + " shards but is stored"
                + " with " + stored + ". To resize: stop every worker, let them drain, delete the subscription's rows"
                + " from the shards table, reset its checkpoints as needed, then start all workers with the new count");
    }
}
