package dev.waymark.subscription.internal;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.plumbing.Utf16;
import dev.waymark.subscription.DeadLetter;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.LeaseFence;
import dev.waymark.subscription.LeaseLostException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** The dead-letter statements, run on a connection the caller manages. */
public final class DeadLetterSql {

    private static final String COLUMNS = "dead_letter_id, subscription, member, event_id, stream_name, stream_version,"
            + " position_tx, position_seq, event_type, reason_kind, reason_summary, reason::text, attempts, created_at,"
            + " replayed_at, replay_outcome, error_class, error_message";

    private final String insert;
    private final String list;
    private final String listMember;
    private final String count;
    private final String get;
    private final String markReplayed;
    private final String purge;
    private final String purgeMember;

    /** Statements for {@code quotedSchema}. */
    public DeadLetterSql(String q) {
        insert = "INSERT INTO " + q + ".dead_letters (subscription, member, event_id, stream_name, stream_version,"
                + " position_tx, position_seq, event_type, reason_kind, reason_summary, reason, attempts, error_class,"
                + " error_message) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ? WHERE EXISTS (SELECT 1 FROM fence)"
                + " ON CONFLICT (subscription, member, event_id) DO UPDATE"
                + " SET reason_kind = EXCLUDED.reason_kind, reason_summary = EXCLUDED.reason_summary,"
                + " reason = EXCLUDED.reason, attempts = EXCLUDED.attempts, error_class = EXCLUDED.error_class,"
                + " error_message = EXCLUDED.error_message, created_at = " + q + ".waymark_now(),"
                + " replayed_at = NULL, replay_outcome = NULL RETURNING 1";
        list = "SELECT " + COLUMNS + " FROM " + q + ".dead_letters WHERE subscription = ? AND dead_letter_id < ?"
                + " ORDER BY dead_letter_id DESC LIMIT ?";
        listMember = "SELECT " + COLUMNS + " FROM " + q + ".dead_letters WHERE subscription = ? AND member = ?"
                + " AND dead_letter_id < ? ORDER BY dead_letter_id DESC LIMIT ?";
        count = "SELECT count(*) FROM " + q + ".dead_letters WHERE subscription = ?";
        get = "SELECT " + COLUMNS + " FROM " + q + ".dead_letters WHERE dead_letter_id = ?";
        // A recorded success stays: a concurrent replay that answered otherwise later does not erase it.
        markReplayed = "UPDATE " + q + ".dead_letters SET replayed_at = " + q + ".waymark_now(), replay_outcome = ?"
                + " WHERE dead_letter_id = ? AND replay_outcome IS DISTINCT FROM ?";
        purge = "DELETE FROM " + q + ".dead_letters WHERE subscription = ?";
        purgeMember = "DELETE FROM " + q + ".dead_letters WHERE subscription = ? AND member = ?";
    }

    /**
     * Records a dead letter and moves the checkpoint past its event, in one statement that checks
     * the fence too if there is one: run it on an autocommit connection (see
     * {@link CheckpointSql#save}). The same event dead-lettered again for the same member (after a
     * checkpoint reset re-delivered it) replaces the reason and attempts and clears the replay
     * marks: an earlier successful replay no longer hides the new failure.
     *
     * @throws LeaseLostException if the fence no longer holds; nothing was written
     */
    public void insertAndSave(Connection c, CheckpointSql checkpoints, String subscription, Partition partition,
            RecordedEvent event, DeadLetterReason reason, int attempts, DeadLetter.HandlerError error, LeaseFence fence)
            throws SQLException {
        String sql = "WITH " + checkpoints.fenceCte(fence) + ", dead AS (" + insert + "), saved AS ("
                + checkpoints.upsertIfFenced() + ") SELECT EXISTS (SELECT 1 FROM fence), (SELECT count(*) FROM dead)";
        try (PreparedStatement p = c.prepareStatement(sql)) {
            int i = CheckpointSql.bindFence(p, 1, fence);
            p.setString(i++, subscription);
            p.setInt(i++, partition.member());
            p.setObject(i++, event.eventId());
            p.setString(i++, event.streamName());
            p.setLong(i++, event.streamVersion());
            p.setLong(i++, event.position().transaction());
            p.setLong(i++, event.position().sequence());
            p.setString(i++, event.type());
            p.setString(i++, reason.kind());
            p.setString(i++, ReasonJson.summary(reason));
            p.setString(i++, ReasonJson.of(reason));
            p.setInt(i++, attempts);
            p.setString(i++, error == null ? null : error.type());
            p.setString(i++, error == null ? null : error.message().orElse(null));
            CheckpointSql.bindCheckpoint(p, i, subscription, partition, event.position());
            try (ResultSet rs = p.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw checkpoints.leaseLost(c, fence);
                }
            }
        }
    }

    /** Dead letters newest first, with id below {@code beforeId}; {@code member} null for all members. */
    public List<DeadLetter> list(Connection c, String subscription, Integer member, long beforeId, int limit)
            throws SQLException {
        try (PreparedStatement p = c.prepareStatement(member == null ? list : listMember)) {
            int i = 1;
            p.setString(i++, subscription);
            if (member != null) {
                p.setInt(i++, member);
            }
            p.setLong(i++, beforeId);
            p.setInt(i, limit);
            try (ResultSet rs = p.executeQuery()) {
                List<DeadLetter> out = new ArrayList<>();
                while (rs.next()) {
                    out.add(map(rs));
                }
                return out;
            }
        }
    }

    /** How many dead letters a subscription has. */
    public long count(Connection c, String subscription) throws SQLException {
        try (PreparedStatement p = c.prepareStatement(count)) {
            p.setString(1, subscription);
            try (ResultSet rs = p.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** One dead letter. */
    public Optional<DeadLetter> get(Connection c, long id) throws SQLException {
        try (PreparedStatement p = c.prepareStatement(get)) {
            p.setLong(1, id);
            try (ResultSet rs = p.executeQuery()) {
                return rs.next() ? Optional.of(map(rs)) : Optional.empty();
            }
        }
    }

    /**
     * Records when and how a dead letter was replayed, unless a replay already recorded
     * {@link DeadLetters#REPLAYED_OK}; returns whether it was recorded.
     */
    public boolean markReplayed(Connection c, long id, String outcome) throws SQLException {
        try (PreparedStatement p = c.prepareStatement(markReplayed)) {
            p.setString(1, Utf16.storable(outcome)); // a handler's exception text may hold a NUL
            p.setLong(2, id);
            p.setString(3, DeadLetters.REPLAYED_OK);
            return p.executeUpdate() > 0;
        }
    }

    /** Deletes dead letters of a subscription, of one member or all ({@code member} null). */
    public int purge(Connection c, String subscription, Integer member) throws SQLException {
        try (PreparedStatement p = c.prepareStatement(member == null ? purge : purgeMember)) {
            p.setString(1, subscription);
            if (member != null) {
                p.setInt(2, member);
            }
            return p.executeUpdate();
        }
    }

    private static DeadLetter map(ResultSet rs) throws SQLException {
        OffsetDateTime replayed = rs.getObject(15, OffsetDateTime.class);
        String errorType = rs.getString(17);
        Optional<DeadLetter.HandlerError> error = errorType == null
                ? Optional.empty()
                : Optional.of(new DeadLetter.HandlerError(errorType, Optional.ofNullable(rs.getString(18))));
        return new DeadLetter(rs.getLong(1), rs.getString(2), rs.getInt(3), rs.getObject(4, UUID.class),
                rs.getString(5), rs.getLong(6), new GlobalPosition(rs.getLong(7), rs.getLong(8)), rs.getString(9),
                rs.getString(10), rs.getString(11), rs.getString(12), rs.getInt(13),
                rs.getObject(14, OffsetDateTime.class).toInstant(),
                Optional.ofNullable(replayed).map(OffsetDateTime::toInstant), Optional.ofNullable(rs.getString(16)),
                error);
    }
}
