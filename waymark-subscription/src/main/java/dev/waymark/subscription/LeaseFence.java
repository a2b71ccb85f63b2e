package dev.waymark.subscription;

/**
 * The lease a checkpoint writer must still hold (an epoch-fenced lease on the database clock):
 * the write succeeds only while the shard row of {@code (subscription, bucket)} is owned by {@code owner} at {@code epoch} and its
 * lease has not expired by the database clock. A zombie that lost its lease cannot move anything.
 *
 * @param subscription the pool's subscription name
 * @param bucket the bucket
 * @param owner the worker id
 * @param epoch the epoch the writer holds
 */
public record LeaseFence(String subscription, int bucket, String owner, long epoch) {}
