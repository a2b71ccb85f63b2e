package dev.waymark.subscription.shard;

import java.time.Duration;

/**
 * Counters of one sharded worker since it started.
 *
 * @param ownedBuckets buckets held now
 * @param claims buckets claimed
 * @param sheds buckets given up to rebalance
 * @param losses buckets found lost (expired or taken over)
 * @param readerRestarts readers restarted after dying
 * @param deliveries handler calls
 * @param retries deliveries answered with a retry (or an exception)
 * @param deadLetters events dead-lettered
 * @param handlerTime total time spent in the handler
 * @param stuckReaders buckets whose handler is stuck: readers stopped whose handlers have not
 *     returned yet (they ignored their interrupt; see {@link ShardListener#readerStuck}), whose
 *     buckets keep their leases until they return, and handlers running longer than the pool's
 *     {@code stuckHandlerThreshold} with no stop requested ({@link ShardListener#handlerStuck});
 *     each bucket counted once
 */
public record ShardStats(int ownedBuckets, long claims, long sheds, long losses, long readerRestarts, long deliveries,
        long retries, long deadLetters, Duration handlerTime, int stuckReaders) {}
