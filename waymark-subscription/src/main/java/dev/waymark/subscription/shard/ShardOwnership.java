package dev.waymark.subscription.shard;

import java.time.Instant;
import java.util.Optional;

/**
 * One bucket's lease as stored.
 *
 * @param bucket the bucket
 * @param owner the owning worker, if any
 * @param epoch grows on every claim
 * @param leaseExpiresAt when the lease expires, if owned
 * @param live whether the lease is owned and unexpired by the database clock
 */
public record ShardOwnership(int bucket, Optional<String> owner, long epoch, Optional<Instant> leaseExpiresAt,
        boolean live) {}
