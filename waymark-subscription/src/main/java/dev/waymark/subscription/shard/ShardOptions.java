package dev.waymark.subscription.shard;

import dev.waymark.core.RetryPolicy;
import dev.waymark.subscription.SubscriptionBuilder;
import dev.waymark.subscription.SubscriptionConfigException;
import dev.waymark.subscription.Target;
import java.time.Duration;

/**
 * The options of a sharded pool; every worker of a subscription must use the same shard count.
 * Liveness in numbers: a worker renews its leases every {@code renewInterval}; a crashed worker's
 * buckets are claimable {@code leaseTtl} after its last renewal and are taken over within about
 * {@code leaseTtl + 2 * renewInterval}. Defaults ({@link #defaults}): a 30 s lease renewed every
 * 10 s, 100 events per read, {@link #DEFAULT_RETRY} (5 deliveries before a dead
 * letter, 1 s apart after a handler exception).
 *
 * @param target what the pool reads
 * @param shardCount the number of buckets, {@code >= 1}, fixed per subscription
 * @param leaseTtl how long a lease lasts without renewal, {@code > 0}
 * @param renewInterval the time between reconcile passes, {@code > 0} and {@code < leaseTtl}
 * @param batchSize events per read, 1 to 10000 (each bucket's reader is a plain subscription, whose
 *     limit this is)
 * @param retry how a handler failure is retried in each bucket, as
 *     {@link dev.waymark.subscription.SubscriptionBuilder#retry(RetryPolicy)} says; not null
 * @param stuckHandlerThreshold how long a handler may run, with no stop requested, before its
 *     bucket is reported as stuck ({@link ShardListener#handlerStuck}), 10 ms to 24 h
 */
public record ShardOptions(
        Target target,
        int shardCount,
        Duration leaseTtl,
        Duration renewInterval,
        int batchSize,
        RetryPolicy retry,
        Duration stuckHandlerThreshold) {

    /** Default lease lifetime: 30 s. */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(30);
    /** Default pass interval: 10 s (three renewals per lease lifetime). */
    public static final Duration DEFAULT_RENEW_INTERVAL = Duration.ofSeconds(10);
    /** Default events per read. */
    public static final int DEFAULT_BATCH_SIZE = 100;
    /** Default handler retry: 5 deliveries in all, 1 s apart ({@link SubscriptionBuilder#DEFAULT_RETRY}). */
    public static final RetryPolicy DEFAULT_RETRY = SubscriptionBuilder.DEFAULT_RETRY;
    /** Default time a handler may run, with no stop requested, before it is reported as stuck: 60 s. */
    public static final Duration DEFAULT_STUCK_HANDLER_THRESHOLD = Duration.ofSeconds(60);

    /** Validates the options in a fixed order; the first violation is reported. */
    public ShardOptions {
        if (target == null) {
            throw new SubscriptionConfigException("target must not be null");
        }
        if (shardCount < 1) {
            throw new SubscriptionConfigException("shardCount must be >= 1, got " + shardCount);
        }
        if (leaseTtl == null || leaseTtl.isNegative() || leaseTtl.isZero()) {
            throw new SubscriptionConfigException("leaseTtl must be > 0, got " + leaseTtl);
        }
        if (renewInterval == null || renewInterval.isNegative() || renewInterval.isZero()) {
            throw new SubscriptionConfigException("renewInterval must be > 0, got " + renewInterval);
        }
        if (renewInterval.compareTo(leaseTtl) >= 0) {
            throw new SubscriptionConfigException("renewInterval (" + renewInterval.toMillis()
                    + " ms) must be shorter than leaseTtl (" + leaseTtl.toMillis()
                    + " ms), or leases expire between renewals");
        }
        if (batchSize < 1 || batchSize > 10_000) {
            throw new SubscriptionConfigException("batchSize must be between 1 and 10000, got " + batchSize);
        }
        if (retry == null) {
            throw new SubscriptionConfigException("retry must not be null");
        }
        if (stuckHandlerThreshold == null || stuckHandlerThreshold.toMillis() < 10
                || stuckHandlerThreshold.compareTo(Duration.ofHours(24)) > 0) {
            throw new SubscriptionConfigException("stuckHandlerThreshold must be between 10 ms and 24 h, got "
                    + stuckHandlerThreshold);
        }
    }

    /** Options with the default {@code stuckHandlerThreshold} ({@link #DEFAULT_STUCK_HANDLER_THRESHOLD}). */
    public ShardOptions(Target target, int shardCount, Duration leaseTtl, Duration renewInterval, int batchSize,
            RetryPolicy retry) {
        this(target, shardCount, leaseTtl, renewInterval, batchSize, retry, DEFAULT_STUCK_HANDLER_THRESHOLD);
    }

    /** The defaults for a target and shard count. */
    public static ShardOptions defaults(Target target, int shardCount) {
        return new ShardOptions(target, shardCount, DEFAULT_LEASE_TTL, DEFAULT_RENEW_INTERVAL, DEFAULT_BATCH_SIZE,
                DEFAULT_RETRY, DEFAULT_STUCK_HANDLER_THRESHOLD);
    }

    /** The fair share of {@code buckets} among {@code workers}: {@code ceil(buckets / max(1, workers))}. */
    public static int fairShare(int buckets, int workers) {
        int k = Math.max(1, workers);
        return (buckets + k - 1) / k;
    }
}
