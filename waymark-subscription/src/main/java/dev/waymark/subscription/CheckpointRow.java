package dev.waymark.subscription;

import dev.waymark.store.GlobalPosition;
import java.time.Instant;

/**
 * A stored checkpoint.
 *
 * @param subscription the subscription
 * @param member the consumer-group member (0 without a group)
 * @param groupSize the group size it was written with (1 without a group)
 * @param position the last handled position
 * @param updatedAt when it was last written (database clock)
 */
public record CheckpointRow(String subscription, int member, int groupSize, GlobalPosition position,
        Instant updatedAt) {}
