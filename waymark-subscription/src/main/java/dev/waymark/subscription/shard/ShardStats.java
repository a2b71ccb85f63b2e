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
 * @param stuckReaders readers stopped whose handlers have not returned yet (they ignored their
 *     interrupt; see {@link ShardListener#readerStuck}); the buckets a worker still holds among
 *     them keep their leases until they return
 */
public record ShardStats(int ownedBuckets, long claims, long sheds, long losses, long readerRestarts, long deliveries,
        long retries, long deadLetters, Duration handlerTime, int stuckReaders) {}
