package dev.waymark.subscription.shard;

import dev.waymark.store.RecordedEvent;

/**
 * One delivery of a sharded pool.
 *
 * @param event the event
 * @param attempt 0 for the first delivery, then 1, 2, ... for retries by this worker
 * @param bucket the bucket (consumer-group member) the event belongs to
 * @param epoch the lease epoch under which this worker reads the bucket; it grows with every change
 *     of owner, so side effects can be fenced with it too
 */
public record ShardDelivery(RecordedEvent event, int attempt, int bucket, long epoch) {}
