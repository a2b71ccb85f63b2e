package dev.waymark.subscription.internal;

import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.subscription.LeaseFence;
import dev.waymark.subscription.LeaseLostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The checkpoint statements, run on a connection the caller manages. */
public final class CheckpointSql {

    private final String load;
    private final String lockSubscription;
    private final String groupSizes;
    private final String initialize;
    private final String save;
    private final String fence;
    private final String resetAll;
    private final String resetOne;

    /** Statements for {@code quotedSchema}. */
    public CheckpointSql(String quotedSchema) {
        String q = quotedSchema;
        load = "SELECT position_tx, position_seq FROM " + q + ".checkpoints WHERE subscription = ? AND member = ?";
        // The lock (until the transaction ends) serializes members starting at once: of two members of
        // different sizes starting a fresh subscription, the second sees the first one's checkpoint.
        lockSubscription = "SELECT pg_advisory_xact_lock(hashtextextended('" + q.replace("'", "''")
                + "#checkpoints#' || ?, 0))";
        groupSizes = "SELECT DISTINCT group_size FROM " + q + ".checkpoints WHERE subscription = ? ORDER BY 1";
        initialize = "INSERT INTO " + q + ".checkpoints (subscription, member, group_size, position_tx, position_seq)"
                + " VALUES (?, ?, ?, ?, ?) ON CONFLICT (subscription, member) DO NOTHING";
        // Never moves backwards: a late or stale writer leaves a newer checkpoint alone.
        save = "INSERT INTO " + q + ".checkpoints (subscription, member, group_size, position_tx, position_seq)"
                + " VALUES (?, ?, ?, ?, ?) ON CONFLICT (subscription, member) DO UPDATE"
                + " SET position_tx = EXCLUDED.position_tx, position_seq = EXCLUDED.position_seq,"
                + " group_size = EXCLUDED.group_size, updated_at = now()"
                + " WHERE (" + q + ".checkpoints.position_tx, " + q + ".checkpoints.position_seq)"
                + " < (EXCLUDED.position_tx, EXCLUDED.position_seq)";
        // FOR SHARE keeps the lease row from changing owner until this transaction ends.
        fence = "SELECT 1 FROM " + q + ".shards WHERE subscription = ? AND bucket = ? AND owner = ? AND epoch = ?"
                + " AND lease_expires_at > clock_timestamp() FOR SHARE";
        resetAll = "UPDATE " + q + ".checkpoints SET position_tx = ?, position_seq = ?, updated_at = now()"
                + " WHERE subscription = ?";
        resetOne = "INSERT INTO " + q + ".checkpoints (subscription, member, group_size, position_tx, position_seq)"
                + " VALUES (?, ?, ?, ?, ?) ON CONFLICT (subscription, member) DO UPDATE"
                + " SET position_tx = EXCLUDED.position_tx, position_seq = EXCLUDED.position_seq,"
                + " group_size = EXCLUDED.group_size, updated_at = now()";
    }

    /** The stored checkpoint. */
    public Optional<GlobalPosition> load(Connection c, String subscription, Partition partition) throws SQLException {
        try (PreparedStatement p = c.prepareStatement(load)) {
            p.setString(1, subscription);
            p.setInt(2, partition.member());
            try (ResultSet rs = p.executeQuery()) {
                return rs.next() ? Optional.of(new GlobalPosition(rs.getLong(1), rs.getLong(2))) : Optional.empty();
            }
        }
    }

    /**
     * The group sizes the subscription's checkpoints were written with, ascending (empty without any).
     * Locks the subscription's checkpoints against another member's start until the transaction ends.
     */
    public List<Integer> groupSizes(Connection c, String subscription) throws SQLException {
        try (PreparedStatement p = c.prepareStatement(lockSubscription)) {
            p.setString(1, subscription);
            p.execute();
        }
        try (PreparedStatement p = c.prepareStatement(groupSizes)) {
            p.setString(1, subscription);
            List<Integer> sizes = new ArrayList<>();
            try (ResultSet rs = p.executeQuery()) {
                while (rs.next()) {
                    sizes.add(rs.getInt(1));
                }
            }
            return sizes;
        }
    }

    /** Writes a first checkpoint unless one exists. */
    public void initialize(Connection c, String subscription, Partition partition, GlobalPosition position)
            throws SQLException {
        execute(c, initialize, subscription, partition, position);
    }

    /**
     * Moves the checkpoint forward to {@code position} (never backwards), after checking the
     * fence if there is one.
     *
     * @return whether the stored checkpoint moved
     * @throws LeaseLostException if the fence no longer holds
     */
    public boolean save(Connection c, String subscription, Partition partition, GlobalPosition position,
            LeaseFence leaseFence) throws SQLException {
        if (leaseFence != null) {
            try (PreparedStatement p = c.prepareStatement(fence)) {
                p.setString(1, leaseFence.subscription());
                p.setInt(2, leaseFence.bucket());
                p.setString(3, leaseFence.owner());
                p.setLong(4, leaseFence.epoch());
                try (ResultSet rs = p.executeQuery()) {
                    if (!rs.next()) {
                        throw new LeaseLostException(leaseFence);
                    }
                }
            }
        }
        return execute(c, save, subscription, partition, position) > 0;
    }

    /** Operator reset of every member of a subscription; may move backwards. */
    public int resetAll(Connection c, String subscription, GlobalPosition position) throws SQLException {
        try (PreparedStatement p = c.prepareStatement(resetAll)) {
            p.setLong(1, position.transaction());
            p.setLong(2, position.sequence());
            p.setString(3, subscription);
            return p.executeUpdate();
        }
    }

    /** Operator reset of one member; creates the row when missing; may move backwards. */
    public void resetOne(Connection c, String subscription, Partition partition, GlobalPosition position)
            throws SQLException {
        execute(c, resetOne, subscription, partition, position);
    }

    private static int execute(Connection c, String sql, String subscription, Partition partition,
            GlobalPosition position) throws SQLException {
        try (PreparedStatement p = c.prepareStatement(sql)) {
            p.setString(1, subscription);
            p.setInt(2, partition.member());
            p.setInt(3, partition.size());
            p.setLong(4, position.transaction());
            p.setLong(5, position.sequence());
            return p.executeUpdate();
        }
    }
}
