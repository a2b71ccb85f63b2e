package dev.waymark.subscription.shard;

import dev.waymark.subscription.Ack;

/**
 * Handles one delivery of a sharded pool and decides what happens next. Deliveries of one bucket
 * come one at a time in global order; buckets run in parallel. Delivery is at least once (a
 * bucket changing owner can repeat an event): key side effects on {@code event().eventId()}.
 * A thrown exception is a retry after the pool's handler retry delay.
 */
@FunctionalInterface
public interface ShardHandler {

    /** Handles a delivery. */
    Ack handle(ShardDelivery delivery) throws Exception;
}
