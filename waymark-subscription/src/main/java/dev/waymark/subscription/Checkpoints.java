package dev.waymark.subscription;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.subscription.internal.CheckpointSql;
import dev.waymark.subscription.internal.Names;
import java.util.Optional;

/**
 * Stored subscription checkpoints, one per (subscription, member). Ordinary saves never move a
 * checkpoint backwards, so a late or stale writer cannot regress it; only {@link #reset} can. An
 * invalid subscription name, or a null member or position, fails with a
 * {@link SubscriptionConfigException} naming it, before the database is touched.
 */
public final class Checkpoints {

    private final EventStore store;
    private final CheckpointSql sql;

    private Checkpoints(EventStore store) {
        this.store = store;
        this.sql = new CheckpointSql(Schema.quote(store.schema()));
    }

    /** The checkpoints of {@code store}'s schema. */
    public static Checkpoints of(EventStore store) {
        if (store == null) {
            throw new SubscriptionConfigException("store must not be null");
        }
        return new Checkpoints(store);
    }

    /** The checkpoint of a member, if one is stored. */
    public Optional<GlobalPosition> get(String subscription, Partition member) {
        requireNameArgument(subscription);
        requireMember(member);
        return Jdbc.inTransaction(store, QueryPurpose.CHECKPOINT, "read checkpoint of '" + subscription + "'",
                c -> sql.load(c, subscription, member));
    }

    /**
     * Moves a member's checkpoint forward to {@code position}; a position at or behind the stored
     * one changes nothing.
     *
     * @return whether the checkpoint moved
     */
    public boolean save(String subscription, Partition member, GlobalPosition position) {
        return save(subscription, member, position, null);
    }

    /**
     * Like {@link #save(String, Partition, GlobalPosition)}, but only while {@code fence} holds.
     *
     * @throws LeaseLostException if the lease was lost; nothing is written
     */
    public boolean save(String subscription, Partition member, GlobalPosition position, LeaseFence fence) {
        requireNameArgument(subscription);
        requireMember(member);
        requirePosition(position);
        return Jdbc.autocommit(store, QueryPurpose.CHECKPOINT, "save checkpoint of '" + subscription + "'",
                c -> sql.save(c, subscription, member, position, fence));
    }

    /**
     * Operator reset: sets every stored member of {@code subscription} to {@code position}, even
     * backwards. Stop the subscription's workers first, or they may write their own positions after.
     *
     * @return how many members were reset
     */
    public int reset(String subscription, GlobalPosition position) {
        requireNameArgument(subscription);
        requirePosition(position);
        return Jdbc.inTransaction(store, QueryPurpose.CHECKPOINT, "reset checkpoints of '" + subscription + "'",
                c -> sql.resetAll(c, subscription, position));
    }

    /** Operator reset of one member, creating its checkpoint if missing. */
    public void reset(String subscription, Partition member, GlobalPosition position) {
        requireNameArgument(subscription);
        requireMember(member);
        requirePosition(position);
        Jdbc.inTransaction(store, QueryPurpose.CHECKPOINT, "reset checkpoint of '" + subscription + "'", c -> {
            sql.resetOne(c, subscription, member, position);
            return null;
        });
    }

    /** Every stored checkpoint, or those of one subscription ({@code null} for all), by name and member. */
    public java.util.List<CheckpointRow> list(String subscription) {
        Names.requireArgument("subscription name", subscription);
        String sql = "SELECT subscription, member, group_size, position_tx, position_seq, updated_at FROM "
                + dev.waymark.store.plumbing.Schema.quote(store.schema()) + ".checkpoints"
                + (subscription == null ? "" : " WHERE subscription = ?") + " ORDER BY subscription, member";
        return Jdbc.inTransaction(store, QueryPurpose.CHECKPOINT, "list checkpoints", c -> {
            try (java.sql.PreparedStatement p = c.prepareStatement(sql)) {
                if (subscription != null) {
                    p.setString(1, subscription);
                }
                java.util.List<CheckpointRow> rows = new java.util.ArrayList<>();
                try (java.sql.ResultSet rs = p.executeQuery()) {
                    while (rs.next()) {
                        rows.add(new CheckpointRow(rs.getString(1), rs.getInt(2), rs.getInt(3),
                                new GlobalPosition(rs.getLong(4), rs.getLong(5)),
                                rs.getObject(6, java.time.OffsetDateTime.class).toInstant()));
                    }
                }
                return rows;
            }
        });
    }

    static void requireMember(Partition member) {
        if (member == null) {
            throw new SubscriptionConfigException("checkpoint member must not be null (use Partition.WHOLE without a"
                    + " consumer group)");
        }
    }

    private static void requirePosition(GlobalPosition position) {
        if (position == null) {
            throw new SubscriptionConfigException("checkpoint position must not be null (GlobalPosition.START for the"
                    + " beginning)");
        }
    }

    /**
     * Checks a subscription name given to a builder.
     *
     * @throws SubscriptionConfigException naming what is wrong
     */
    static void requireName(String subscription) {
        if (subscription == null || subscription.isBlank() || subscription.length() > 200) {
            throw new SubscriptionConfigException("subscription name must be 1 to 200 characters and not blank, got "
                    + (subscription == null ? "null" : "'" + Names.printable(subscription) + "'"));
        }
        String invisible = Names.invisible(subscription);
        if (invisible != null) {
            throw new SubscriptionConfigException("subscription name must not hold control or invisible characters,"
                    + " got '" + Names.printable(subscription) + "' (" + invisible + ")");
        }
    }

    /**
     * Checks a subscription name given to a call, before the database is touched.
     *
     * @throws dev.waymark.store.InvalidInputException when it holds a control or invisible character
     * @throws SubscriptionConfigException when it is null, blank or too long
     */
    static void requireNameArgument(String subscription) {
        Names.requireArgument("subscription name", subscription);
        requireName(subscription);
    }
}
