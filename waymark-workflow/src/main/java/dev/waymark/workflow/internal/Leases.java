package dev.waymark.workflow.internal;

import dev.waymark.workflow.status.WorkflowStatus;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/** The statements of instance leases: claim, release, renew, and a crash recorded under a lease. */
public final class Leases {

    /** A claimed lease: its epoch, and the expiry of the dead owner's lease it replaced (null if none). */
    public record Claim(long epoch, Instant previousExpiry, Instant claimedAt) {}

    /** An instance claimed by {@link #claimDue}, with its claim. */
    public record Claimed(Instances.Key key, Claim claim) {}

    /**
     * What {@link #claimDue} took, the next future wake time of any instance (null if none) and the
     * database time of the claim.
     */
    public record DueBatch(List<Claimed> claimed, Instant nextDue, Instant dbNow) {}

    private final Sql sql;
    private final String s;

    Leases(Sql sql) {
        this.sql = sql;
        this.s = "\"" + sql.schema() + "\".";
    }

    /**
     * Claims the lease of a runnable instance (running, or suspended with a due wake time; no live
     * lease; no crash backoff pending): a new epoch, and the expired lease it replaced if any. Empty
     * when the instance is missing, terminal, not yet due, leased to a live owner or backing off.
     */
    public Optional<Claim> claim(String name, String id, String owner, Duration ttl) {
        return sql.query("claim workflow " + name + "/" + id,
                "SELECT epoch, previous_expiry AS expired, claimed_at FROM " + s + "wf_claim(?, ?, ?, ?)", ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                    ps.setString(3, owner);
                    ps.setLong(4, ttl.toMillis());
                }, rs -> rs.next()
                        ? Optional
                                .of(new Claim(rs.getLong(1), Sql.instant(rs, "expired"), Sql.instant(rs, "claimed_at")))
                        : Optional.empty());
    }

    /**
     * Claims up to {@code limit} due instances of {@code names} in one statement ({@code wf_claim_due},
     * schema V19): runnable (running, or suspended with a due wake time), unleased or with an expired
     * lease, not backing off; oldest due first; rows another transaction holds are skipped, so workers
     * claiming side by side take disjoint batches. With {@code limit} 0 it only reads the next wake time.
     */
    public DueBatch claimDue(java.util.Collection<String> names, String owner, Duration ttl, int limit) {
        return sql.query("claim due workflows for " + owner,
                "SELECT name, id, epoch, previous_expiry AS expired, claimed_at, next_due FROM " + s
                        + "wf_claim_due(?, ?, ?, ?)",
                ps -> {
                    ps.setArray(1, ps.getConnection().createArrayOf("text", names.toArray(String[]::new)));
                    ps.setString(2, owner);
                    ps.setLong(3, ttl.toMillis());
                    ps.setInt(4, limit);
                }, rs -> {
                    List<Claimed> out = new java.util.ArrayList<>();
                    Instant next = null;
                    Instant now = null;
                    while (rs.next()) {
                        String name = rs.getString(1);
                        if (name == null) {
                            next = Sql.instant(rs, "next_due");
                            now = Sql.instant(rs, "claimed_at");
                        } else {
                            out.add(new Claimed(new Instances.Key(name, rs.getString(2)),
                                    new Claim(rs.getLong(3), Sql.instant(rs, "expired"),
                                            Sql.instant(rs, "claimed_at"))));
                        }
                    }
                    if (out.size() > limit) {
                        throw new IllegalStateException(
                                "claimed " + out.size() + " workflows, asked for at most " + limit);
                    }
                    return new DueBatch(List.copyOf(out), next, now);
                });
    }

    /**
     * Releases a lease held at {@code epoch}; a run that made progress also clears its crash record.
     * Returns the instance's status after the release, or null if the lease was no longer held.
     */
    public WorkflowStatus release(String name, String id, String owner, long epoch, boolean progressed) {
        return sql.query("release workflow " + name + "/" + id, "SELECT " + s + "wf_release(?, ?, ?, ?, ?)", ps -> {
            ps.setString(1, name);
            ps.setString(2, id);
            ps.setString(3, owner);
            ps.setLong(4, epoch);
            ps.setBoolean(5, progressed);
        }, rs -> {
            String status = Instances.single(rs);
            return status == null ? null : WorkflowStatus.fromSql(status);
        });
    }

    /** Extends the leases {@code owner} holds on the given instances; returns how many were extended. */
    public int renew(String owner, List<Instances.Key> keys, Duration ttl) {
        String[] names = keys.stream().map(Instances.Key::name).toArray(String[]::new);
        String[] ids = keys.stream().map(Instances.Key::id).toArray(String[]::new);
        return sql.query("renew workflow leases of " + owner, "SELECT " + s + "wf_renew(?, ?, ?, ?)", ps -> {
            ps.setString(1, owner);
            ps.setArray(2, ps.getConnection().createArrayOf("text", names));
            ps.setArray(3, ps.getConnection().createArrayOf("text", ids));
            ps.setLong(4, ttl.toMillis());
        }, rs -> {
            rs.next();
            return rs.getInt(1);
        });
    }

    /**
     * Records a crash: one more attempt, the error, and the next attempt time (database clock, backoff
     * {@code base * 2^attempts} capped at {@code cap}), only while the instance still has lease
     * {@code epoch}. Empty if it became terminal or another lease took it over.
     */
    public OptionalInt recordCrash(String name, String id, String error, Duration base, Duration cap, long epoch) {
        return sql.query("record a crash of workflow " + name + "/" + id,
                "SELECT " + s + "wf_record_crash(?, ?, ?, ?, ?, ?)",
                ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                    ps.setString(3, error);
                    ps.setLong(4, base.toMillis());
                    ps.setLong(5, cap.toMillis());
                    ps.setLong(6, epoch);
                }, rs -> {
                    rs.next();
                    int attempts = rs.getInt(1);
                    return rs.wasNull() ? OptionalInt.empty() : OptionalInt.of(attempts);
                });
    }
}
