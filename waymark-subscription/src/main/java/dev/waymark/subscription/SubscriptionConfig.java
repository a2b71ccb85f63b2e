package dev.waymark.subscription;

import dev.waymark.store.Partition;
import dev.waymark.store.RetryPolicy;
import java.time.Duration;
import java.util.Set;

/**
 * A validated subscription configuration; build it with {@link Subscription#builder}.
 *
 * @param name the subscription's name: with the member, the checkpoint's key
 * @param target what it reads
 * @param partition the consumer-group member it is ({@link Partition#WHOLE} for none)
 * @param eventTypes the event types to deliver; empty for all (others are skipped, never dead-lettered)
 * @param start where it starts
 * @param batchSize events read per query
 * @param retry the retry budget
 * @param checkpoint how often the checkpoint is written
 * @param pollInterval the longest wait for new events without a wake-up
 * @param fence the lease checkpoint writes are conditioned on, or null
 * @param stuckHandlerThreshold how long a handler may run, with no stop requested, before it is
 *     reported as stuck (10 ms to 24 h)
 */
public record SubscriptionConfig(
        String name,
        Target target,
        Partition partition,
        Set<String> eventTypes,
        StartPosition start,
        int batchSize,
        RetryPolicy retry,
        CheckpointPolicy checkpoint,
        Duration pollInterval,
        LeaseFence fence,
        Duration stuckHandlerThreshold) {

    /** Validates the configuration. */
    public SubscriptionConfig {
        Checkpoints.requireName(name);
        if (target == null) {
            throw new SubscriptionConfigException("target must not be null");
        }
        if (partition == null) {
            throw new SubscriptionConfigException("partition must not be null (use Partition.WHOLE)");
        }
        if (eventTypes == null) {
            throw new SubscriptionConfigException("eventTypes must not be null (empty for all types)");
        }
        if (eventTypes.stream().anyMatch(t -> t == null || t.isBlank())) {
            throw new SubscriptionConfigException("eventTypes must not hold a null or blank type, got " + eventTypes);
        }
        eventTypes = Set.copyOf(eventTypes);
        if (start == null) {
            throw new SubscriptionConfigException("start position must not be null");
        }
        if (batchSize < 1 || batchSize > 10_000) {
            throw new SubscriptionConfigException("batchSize must be between 1 and 10000, got " + batchSize);
        }
        if (retry == null || checkpoint == null) {
            throw new SubscriptionConfigException("retry and checkpoint policies must not be null");
        }
        if (pollInterval == null || pollInterval.toMillis() < 10 || pollInterval.compareTo(Duration.ofHours(1)) > 0) {
            throw new SubscriptionConfigException("pollInterval must be between 10 ms and 1 h, got " + pollInterval);
        }
        if (stuckHandlerThreshold == null || stuckHandlerThreshold.toMillis() < 10
                || stuckHandlerThreshold.compareTo(Duration.ofHours(24)) > 0) {
            throw new SubscriptionConfigException("stuckHandlerThreshold must be between 10 ms and 24 h, got "
                    + stuckHandlerThreshold);
        }
    }

    /**
     * A configuration with the default {@code stuckHandlerThreshold}
     * ({@link SubscriptionBuilder#DEFAULT_STUCK_HANDLER_THRESHOLD}).
     */
    public SubscriptionConfig(String name, Target target, Partition partition, Set<String> eventTypes,
            StartPosition start, int batchSize, RetryPolicy retry, CheckpointPolicy checkpoint, Duration pollInterval,
            LeaseFence fence) {
        this(name, target, partition, eventTypes, start, batchSize, retry, checkpoint, pollInterval, fence,
                SubscriptionBuilder.DEFAULT_STUCK_HANDLER_THRESHOLD);
    }

    /** The member's label for messages and thread names. */
    public String memberLabel() {
        return partition.isWhole() ? name : name + "#" + partition;
    }
}
