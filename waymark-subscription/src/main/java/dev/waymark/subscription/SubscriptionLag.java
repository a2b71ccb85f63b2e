package dev.waymark.subscription;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Horizon;
import dev.waymark.store.Partition;
import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.subscription.internal.CheckpointSql;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;

/**
 * How far a subscription member is behind: visible events after its checkpoint, the age of the
 * oldest of them, and the store's visibility-horizon lag (events committed but not yet visible).
 *
 * @param checkpoint the stored checkpoint, or {@link GlobalPosition#START} when none
 * @param eventsBehind visible events of the target and member after the checkpoint
 * @param oldestUnreadAge how long ago the oldest of them was appended, or zero
 * @param horizon the store's horizon lag
 */
public record SubscriptionLag(GlobalPosition checkpoint, long eventsBehind, Duration oldestUnreadAge, Horizon horizon) {

    /**
     * Measures the lag of {@code subscription} (member {@code partition}) over {@code target}.
     * Counting is proportional to the lag: cheap when caught up.
     *
     * @throws SubscriptionConfigException if an argument is null or the name invalid
     */
    public static SubscriptionLag measure(EventStore store, String subscription, Target target, Partition partition) {
        if (store == null) {
            throw new SubscriptionConfigException("store must not be null");
        }
        Checkpoints.requireNameArgument(subscription);
        if (target == null) {
            throw new SubscriptionConfigException("target must not be null (Target.all() for every stream)");
        }
        Checkpoints.requireMember(partition);
        String q = Schema.quote(store.schema());
        CheckpointSql checkpoints = new CheckpointSql(q);
        // count_events_after (schema version 9) walks the index from the checkpoint whatever its plan's age
        String sql = "SELECT events, oldest FROM " + q + ".count_events_after(?::text::xid8, ?, ?, ?, ?)";
        return Jdbc.inTransaction(store, "measure lag of '" + subscription + "'", c -> {
            GlobalPosition at = checkpoints.load(c, subscription, partition).orElse(GlobalPosition.START);
            try (PreparedStatement p = c.prepareStatement(sql)) {
                p.setString(1, Long.toString(at.transaction()));
                p.setLong(2, at.sequence());
                p.setString(3, target instanceof Target.Category category ? category.name() : null);
                if (partition.isWhole()) {
                    p.setNull(4, Types.INTEGER);
                    p.setNull(5, Types.INTEGER);
                } else {
                    p.setInt(4, partition.size());
                    p.setInt(5, partition.member());
                }
                try (ResultSet rs = p.executeQuery()) {
                    rs.next();
                    Duration age = Optional.ofNullable(rs.getObject(2, OffsetDateTime.class))
                            .map(t -> Duration.between(t.toInstant(), Instant.now()))
                            .filter(d -> !d.isNegative()).orElse(Duration.ZERO);
                    return new SubscriptionLag(at, rs.getLong(1), age, store.horizon());
                }
            }
        });
    }
}
