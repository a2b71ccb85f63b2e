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
    private final String fencedSave;
    private final String fenceCte;
    private final String upsertIfFenced;
    private final String leaseState;
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
        // A fenced write is one autocommit statement (DESIGN decision 8): the fence's FOR SHARE keeps
        // the lease row from changing owner until the statement ends, and no pause of the writing
        // process can hold that lock, or a transaction id, longer than the server needs to run it.
        // A claim that locked the row first makes the fence wait, then see the new owner: refused.
        fenceCte = "fence AS (SELECT 1 FROM " + q + ".shards WHERE subscription = ? AND bucket = ? AND owner = ?"
                + " AND epoch = ? AND lease_expires_at > " + q + ".waymark_clock_timestamp() FOR SHARE)";
        upsertIfFenced = "INSERT INTO " + q + ".checkpoints (subscription, member, group_size, position_tx,"
                + " position_seq) SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM fence)"
                + " ON CONFLICT (subscription, member) DO UPDATE"
                + " SET position_tx = EXCLUDED.position_tx, position_seq = EXCLUDED.position_seq,"
                + " group_size = EXCLUDED.group_size, updated_at = now()"
                + " WHERE (" + q + ".checkpoints.position_tx, " + q + ".checkpoints.position_seq)"
                + " < (EXCLUDED.position_tx, EXCLUDED.position_seq) RETURNING 1";
        fencedSave = "WITH " + fenceCte + ", saved AS (" + upsertIfFenced + ")"
                + " SELECT EXISTS (SELECT 1 FROM fence), EXISTS (SELECT 1 FROM saved)";
        leaseState = "SELECT owner, epoch, lease_expires_at > " + q + ".waymark_clock_timestamp() FROM " + q + ".shards"
                + " WHERE subscription = ? AND bucket = ?";
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
     * Moves the checkpoint forward to {@code position} (never backwards) in one statement, which
     * checks the fence too if there is one: run it on an autocommit connection, so that it is a
     * transaction of its own that no pause of this process can keep open.
     *
     * @return whether the stored checkpoint moved
     * @throws LeaseLostException if the fence no longer holds; nothing was written
     */
    public boolean save(Connection c, String subscription, Partition partition, GlobalPosition position,
            LeaseFence leaseFence) throws SQLException {
        if (leaseFence == null) {
            return execute(c, save, subscription, partition, position) > 0;
        }
        try (PreparedStatement p = c.prepareStatement(fencedSave)) {
            int next = bindFence(p, 1, leaseFence);
            bindCheckpoint(p, next, subscription, partition, position);
            try (ResultSet rs = p.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw leaseLost(c, leaseFence);
                }
                return rs.getBoolean(2);
            }
        }
    }

    /** The fence as a CTE named {@code fence}: one row while it holds ({@code SELECT 1} without one). */
    String fenceCte(LeaseFence leaseFence) {
        return leaseFence == null ? "fence AS (SELECT 1)" : fenceCte;
    }

    /** The checkpoint upsert that writes only while the CTE {@code fence} has a row. */
    String upsertIfFenced() {
        return upsertIfFenced;
    }

    /** Binds {@link #fenceCte}'s parameters from {@code index}; returns the next index. */
    static int bindFence(PreparedStatement p, int index, LeaseFence leaseFence) throws SQLException {
        if (leaseFence == null) {
            return index;
        }
        p.setString(index, leaseFence.subscription());
        p.setInt(index + 1, leaseFence.bucket());
        p.setString(index + 2, leaseFence.owner());
        p.setLong(index + 3, leaseFence.epoch());
        return index + 4;
    }

    /** Binds {@link #upsertIfFenced}'s parameters from {@code index}; returns the next index. */
    static int bindCheckpoint(PreparedStatement p, int index, String subscription, Partition partition,
            GlobalPosition position) throws SQLException {
        p.setString(index, subscription);
        p.setInt(index + 1, partition.member());
        p.setInt(index + 2, partition.size());
        p.setLong(index + 3, position.transaction());
        p.setLong(index + 4, position.sequence());
        return index + 5;
    }

    /** The refusal of a write fenced by {@code leaseFence}, with the lease as stored now (best effort). */
    LeaseLostException leaseLost(Connection c, LeaseFence leaseFence) {
        try (PreparedStatement p = c.prepareStatement(leaseState)) {
            p.setString(1, leaseFence.subscription());
            p.setInt(2, leaseFence.bucket());
            try (ResultSet rs = p.executeQuery()) {
                if (rs.next()) {
                    return new LeaseLostException(leaseFence, Optional.ofNullable(rs.getString(1)), rs.getLong(2),
                            rs.getBoolean(3));
                }
            }
        } catch (SQLException e) {
            LeaseLostException lost = new LeaseLostException(leaseFence);
            lost.addSuppressed(e);
            return lost;
        }
        return new LeaseLostException(leaseFence);
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
            bindCheckpoint(p, 1, subscription, partition, position);
            return p.executeUpdate();
        }
    }
}
