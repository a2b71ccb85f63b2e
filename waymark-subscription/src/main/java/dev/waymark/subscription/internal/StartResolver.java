package dev.waymark.subscription.internal;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.subscription.CheckpointMissingException;
import dev.waymark.subscription.ConsumerGroupSizeMismatchException;
import dev.waymark.subscription.StartPosition;
import dev.waymark.subscription.SubscriptionConfig;
import java.util.List;
import java.util.Optional;

/**
 * Where a subscription's run starts: after the given position, or from the stored checkpoint
 * (writing the first one when missing), in one bounded transaction. Either way the subscription's
 * checkpoints must have been written by a group of this size: member i of one size and member i of
 * another read different streams, so a checkpoint of another size would skip events (a new member
 * has none, but the others of its group do, so the whole subscription is compared), and a start
 * after a position would write checkpoints of a second size beside them.
 */
final class StartResolver {

    private final EventStore store;
    private final SubscriptionConfig config;
    private final CheckpointSql checkpoints;

    StartResolver(EventStore store, SubscriptionConfig config, CheckpointSql checkpoints) {
        this.store = store;
        this.config = config;
        this.checkpoints = checkpoints;
    }

    /**
     * The position the run starts after.
     *
     * @throws ConsumerGroupSizeMismatchException when the checkpoints were written by another size
     * @throws CheckpointMissingException when the start is {@code checkpointOrFail()} and there is none
     */
    GlobalPosition resolve() {
        return Jdbc.inTransaction(store, QueryPurpose.CHECKPOINT, "resolve the start of " + config.memberLabel(), c -> {
            List<Integer> sizes = checkpoints.groupSizes(c, config.name());
            if (!sizes.isEmpty() && !sizes.equals(List.of(config.partition().size()))) {
                throw new ConsumerGroupSizeMismatchException(config.name(), config.partition().size(), sizes);
            }
            return switch (config.start()) {
                case StartPosition.After after -> after.position();
                case StartPosition.FromCheckpoint from -> {
                    Optional<GlobalPosition> existing = checkpoints.load(c, config.name(), config.partition());
                    if (existing.isPresent()) {
                        yield existing.get();
                    }
                    GlobalPosition initial = switch (from.whenMissing()) {
                        case BEGINNING -> GlobalPosition.START;
                        case END -> store.headPosition();
                        case FAIL -> throw new CheckpointMissingException(config.name(),
                                config.partition().toString());
                    };
                    // The first checkpoint is written at once, so a restart never moves the start.
                    checkpoints.initialize(c, config.name(), config.partition(), initial);
                    yield checkpoints.load(c, config.name(), config.partition()).orElse(initial);
                }
            };
        });
    }
}
