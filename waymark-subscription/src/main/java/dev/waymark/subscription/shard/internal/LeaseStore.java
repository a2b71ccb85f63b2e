package dev.waymark.subscription.shard.internal;

import dev.waymark.store.EventStore;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.StoreException;
import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.store.plumbing.TransactionBounds;
import dev.waymark.subscription.ConsumerGroupSizeMismatchException;
import dev.waymark.subscription.internal.CheckpointSql;
import dev.waymark.subscription.shard.ShardCountMismatchException;
import dev.waymark.subscription.shard.ShardOwnership;
import dev.waymark.subscription.shard.ShardReleaseTimeoutException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Lease rows of a sharded subscription: one per bucket, plus one membership row per live worker.
 * Every time comes from the database ({@code waymark_now()} of each short transaction, DESIGN decision 3). A claim increments the bucket's epoch, which fences checkpoint writes.
 */
public final class LeaseStore {

    /** A bucket held at an epoch. */
    public record Lease(int bucket, long epoch) {}

    private final EventStore store;
    private final String subscription;
    private final int shardCount;
    private final Duration ttl;
    private final String q;
    /** The lease clock: the database's ({@code waymark_now()}, which a test clock can shift). */
    private final String now;

    /** The lease rows of {@code subscription} ({@code shardCount} buckets, leases of {@code ttl}) in {@code store}. */
    public LeaseStore(EventStore store, String subscription, int shardCount, Duration ttl) {
        this.store = store;
        this.subscription = subscription;
        this.shardCount = shardCount;
        this.ttl = ttl;
        this.q = Schema.quote(store.schema());
        this.now = q + ".waymark_now()";
    }

    /** The pool's name. */
    public String subscription() {
        return subscription;
    }

    private <T> T tx(String what, Jdbc.Work<T> work) {
        return Jdbc.inTransaction(store, QueryPurpose.LEASE, what + " for sharded subscription '"
                + subscription + "'", work);
    }

    /**
     * {@link #tx}, on the store handle's LISTEN connection while it is up ({@link Jdbc#inTransactionOffPool}):
     * for the renewals every pass and the stop's keeper send, which are safe to run twice. An idle
     * pool then takes no connection from the pool, which would validate it with a transaction of its
     * own (HikariCP, for a connection idle for more than 500 ms).
     */
    private <T> T renewalTx(String what, Jdbc.Work<T> work) {
        return Jdbc.inTransactionOffPool(store, QueryPurpose.LEASE, what + " for sharded subscription '" + subscription
                + "'", work);
    }

    private String interval() {
        return "(" + ttl.toMillis() + " * interval '1 millisecond')";
    }

    /**
     * Creates the bucket rows once; refuses a shard count that differs from the stored one.
     *
     * @throws ShardCountMismatchException on a different stored count
     */
    public void ensureShards() {
        tx("ensure shard rows", c -> {
            // Serializes the starts of the pool's workers: the second sees the first one's rows.
            try (PreparedStatement p = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
                p.setString(1, store.schema() + "#shards#" + subscription);
                p.execute();
            }
            List<Integer> mine = new ArrayList<>();
            try (PreparedStatement p = c.prepareStatement("INSERT INTO " + q + ".shards (subscription, bucket,"
                    + " shard_count) SELECT ?, g, ? FROM generate_series(0, ? - 1) g"
                    + " WHERE NOT EXISTS (SELECT 1 FROM " + q + ".shards WHERE subscription = ?)"
                    + " ON CONFLICT DO NOTHING RETURNING bucket")) {
                p.setString(1, subscription);
                p.setInt(2, shardCount);
                p.setInt(3, shardCount);
                p.setString(4, subscription);
                try (ResultSet rs = p.executeQuery()) {
                    while (rs.next()) {
                        mine.add(rs.getInt(1));
                    }
                }
            }
            // The counts stored by others: a refused start's own rows (inserted beside those of a
            // start that committed meanwhile) are neither counted nor kept (the refusal rolls back).
            List<Integer> counts = new ArrayList<>();
            try (PreparedStatement p = c.prepareStatement("SELECT DISTINCT shard_count FROM " + q
                    + ".shards WHERE subscription = ? AND NOT (bucket = ANY(?)) ORDER BY 1")) {
                p.setString(1, subscription);
                p.setArray(2, c.createArrayOf("int4", mine.toArray()));
                try (ResultSet rs = p.executeQuery()) {
                    while (rs.next()) {
                        counts.add(rs.getInt(1));
                    }
                }
            }
            if (!counts.isEmpty() && !counts.equals(List.of(shardCount))) {
                throw new ShardCountMismatchException(subscription, shardCount, counts);
            }
            // Checkpoints of another group size (a plain subscription of the same name, a resize done
            // halfway) would make every bucket's reader refuse to start, pass after pass.
            List<Integer> sizes = new CheckpointSql(q).groupSizes(c, subscription);
            if (!sizes.isEmpty() && !sizes.equals(List.of(shardCount))) {
                throw new ConsumerGroupSizeMismatchException(subscription, shardCount, sizes);
            }
            return null;
        });
    }

    /** How many lease TTLs a worker may stay silent before its row is deleted. */
    static final int FORGET_AFTER_TTLS = 10;

    /**
     * What one renewal of a worker's pass found: the leases it still holds, each at its epoch, and
     * the other live workers with the unexpired leases each holds.
     */
    public record Renewal(List<Lease> held, Map<String, Integer> others) {}

    /**
     * A pass's lease work in one statement, hence one transaction per pool per renew interval
     * whatever the shard count: records that {@code worker} is alive (deleting, on the way, the rows
     * of workers silent for {@value #FORGET_AFTER_TTLS} TTLs), renews every lease it still owns
     * (expired ones nobody claimed included) and counts the other live workers' leases. A lease
     * another worker claimed meanwhile is not renewed: its owner changed, and its epoch with it, so
     * the epoch each held lease comes back with tells the pass which readers to fence.
     *
     * <p>Every part of the statement sees the rows as they were when it began: the counts of the
     * other workers are those of their last passes, as with separate statements. It runs on the
     * store handle's LISTEN connection while that is up (no pool checkout); run twice (the LISTEN
     * connection failed under it), it renews again and counts again.
     */
    public Renewal renewAndCount(String worker) {
        return renewalTx("renew leases", c -> {
            try (PreparedStatement p = c.prepareStatement("WITH beat AS (INSERT INTO " + q + ".workers"
                    + " (subscription, worker_id, heartbeat_at) VALUES (?, ?, " + now + ")"
                    + " ON CONFLICT (subscription, worker_id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at"
                    + " RETURNING 1),"
            // never this worker's own row: one statement must not change a row twice
                    + " forgot AS (DELETE FROM " + q + ".workers WHERE subscription = ? AND worker_id <> ?"
                    + " AND heartbeat_at < " + now + " - " + FORGET_AFTER_TTLS + " * " + interval() + "),"
                    + " renewed AS (UPDATE " + q + ".shards SET lease_expires_at = " + now + " + " + interval()
                    + ", heartbeat_at = " + now + " WHERE subscription = ? AND owner = ?"
            // After the heartbeat, never before: a worker whose own row is locked (a frozen
            // transaction of an operator, say) waits there without holding its lease rows, so
            // that another worker can claim them once they expire, as with separate statements.
                    + " AND EXISTS (SELECT 1 FROM beat) RETURNING bucket, epoch)"
                    + " SELECT NULL::text, bucket, epoch FROM renewed"
                    + " UNION ALL SELECT w.worker_id, NULL, (SELECT count(*) FROM " + q + ".shards s"
                    + " WHERE s.subscription = w.subscription AND s.owner = w.worker_id AND s.lease_expires_at > "
                    + now + ") FROM " + q + ".workers w WHERE w.subscription = ? AND w.worker_id <> ?"
                    + " AND w.heartbeat_at > " + now + " - " + interval())) {
                int i = 1;
                p.setString(i++, subscription);
                p.setString(i++, worker);
                p.setString(i++, subscription);
                p.setString(i++, worker);
                p.setString(i++, subscription);
                p.setString(i++, worker);
                p.setString(i++, subscription);
                p.setString(i, worker);
                List<Lease> held = new ArrayList<>();
                Map<String, Integer> others = new HashMap<>();
                try (ResultSet rs = p.executeQuery()) {
                    while (rs.next()) {
                        String other = rs.getString(1);
                        if (other == null) {
                            held.add(new Lease(rs.getInt(2), rs.getLong(3)));
                        } else {
                            others.put(other, (int) rs.getLong(3));
                        }
                    }
                }
                return new Renewal(held, others);
            }
        });
    }

    /** Renews every lease {@code worker} still owns (expired ones nobody claimed included). */
    public List<Lease> renew(String worker) {
        return renewalTx("renew leases", c -> {
            try (PreparedStatement p = c.prepareStatement("UPDATE " + q + ".shards SET lease_expires_at = " + now
                    + " + " + interval() + ", heartbeat_at = " + now + " WHERE subscription = ? AND owner = ?"
                    + " RETURNING bucket, epoch")) {
                p.setString(1, subscription);
                p.setString(2, worker);
                return leases(p);
            }
        });
    }

    /** Claims up to {@code limit} free or expired buckets, lowest first; each claim increments the epoch. */
    public List<Lease> claim(String worker, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        return tx("claim buckets", c -> {
            try (PreparedStatement p = c.prepareStatement("UPDATE " + q + ".shards SET owner = ?, epoch = epoch + 1,"
                    + " lease_expires_at = " + now + " + " + interval() + ", heartbeat_at = " + now
                    + " WHERE subscription = ? AND bucket IN (SELECT bucket FROM " + q + ".shards"
                    + " WHERE subscription = ? AND (owner IS NULL OR lease_expires_at <= " + now + ")"
                    + " ORDER BY bucket LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING bucket, epoch")) {
                p.setString(1, worker);
                p.setString(2, subscription);
                p.setString(3, subscription);
                p.setInt(4, limit);
                return leases(p);
            }
        });
    }

    /** Gives up buckets; only rows {@code worker} still owns are touched. Returns the released buckets. */
    public List<Integer> relinquish(String worker, List<Integer> buckets) {
        if (buckets.isEmpty()) {
            return List.of();
        }
        return tx("relinquish buckets", c -> {
            try (PreparedStatement p = c.prepareStatement("UPDATE " + q + ".shards SET owner = NULL,"
                    + " lease_expires_at = NULL WHERE subscription = ? AND owner = ? AND bucket = ANY(?)"
                    + " RETURNING bucket")) {
                p.setString(1, subscription);
                p.setString(2, worker);
                Array array = c.createArrayOf("int4", buckets.toArray());
                p.setArray(3, array);
                List<Integer> released = new ArrayList<>();
                try (ResultSet rs = p.executeQuery()) {
                    while (rs.next()) {
                        released.add(rs.getInt(1));
                    }
                }
                return released;
            }
        });
    }

    /**
     * Releases every bucket of {@code worker} but those in {@code keep} (their leases run out on their
     * own) and removes its membership row (graceful shutdown).
     */
    public void leave(String worker, Collection<Integer> keep) {
        tx("leave", c -> {
            try (PreparedStatement p = c.prepareStatement("UPDATE " + q + ".shards SET owner = NULL,"
                    + " lease_expires_at = NULL WHERE subscription = ? AND owner = ? AND NOT (bucket = ANY(?))")) {
                p.setString(1, subscription);
                p.setString(2, worker);
                p.setArray(3, c.createArrayOf("int4", keep.toArray()));
                p.executeUpdate();
            }
            try (PreparedStatement p = c.prepareStatement("DELETE FROM " + q + ".workers WHERE subscription = ?"
                    + " AND worker_id = ?")) {
                p.setString(1, subscription);
                p.setString(2, worker);
                p.executeUpdate();
            }
            return null;
        });
    }

    /**
     * Releases every bucket of {@code worker} and removes its membership row, all or nothing, in one
     * transaction whose lock waits end at the store's transaction bound: the operator's release of a
     * worker known to be dead.
     *
     * @return the released buckets, ascending
     * @throws ShardReleaseTimeoutException when a lease row stayed locked by another transaction
     *     for the whole bound; nothing was released
     */
    public List<Integer> release(String worker) {
        try {
            return tx("release the buckets of worker " + worker, c -> {
                List<Integer> released = new ArrayList<>();
                try (PreparedStatement p = c.prepareStatement("UPDATE " + q + ".shards SET owner = NULL,"
                        + " lease_expires_at = NULL WHERE subscription = ? AND owner = ? RETURNING bucket")) {
                    p.setString(1, subscription);
                    p.setString(2, worker);
                    try (ResultSet rs = p.executeQuery()) {
                        while (rs.next()) {
                            released.add(rs.getInt(1));
                        }
                    }
                }
                try (PreparedStatement p = c.prepareStatement("DELETE FROM " + q + ".workers WHERE subscription = ?"
                        + " AND worker_id = ?")) {
                    p.setString(1, subscription);
                    p.setString(2, worker);
                    p.executeUpdate();
                }
                released.sort(null);
                return released;
            });
        } catch (StoreException e) {
            if (TIMEOUTS.contains(e.sqlState())) {
                throw new ShardReleaseTimeoutException(subscription, worker, TransactionBounds.of(store).timeout(), e);
            }
            throw e;
        }
    }

    /** A lock wait ({@code lock_timeout}) or a statement ({@code statement_timeout}) that ran out. */
    private static final Set<String> TIMEOUTS = Set.of("55P03", "57014");

    /** Every bucket's lease, by bucket. */
    public List<ShardOwnership> snapshot() {
        return tx("read ownership", c -> {
            try (PreparedStatement p = c.prepareStatement("SELECT bucket, owner, epoch, lease_expires_at,"
                    + " owner IS NOT NULL AND lease_expires_at > " + now + " FROM " + q + ".shards"
                    + " WHERE subscription = ? ORDER BY bucket")) {
                p.setString(1, subscription);
                List<ShardOwnership> out = new ArrayList<>();
                try (ResultSet rs = p.executeQuery()) {
                    while (rs.next()) {
                        OffsetDateTime expires = rs.getObject(4, OffsetDateTime.class);
                        out.add(new ShardOwnership(rs.getInt(1), Optional.ofNullable(rs.getString(2)), rs.getLong(3),
                                Optional.ofNullable(expires).map(OffsetDateTime::toInstant), rs.getBoolean(5)));
                    }
                }
                return out;
            }
        });
    }

    private static List<Lease> leases(PreparedStatement p) throws SQLException {
        List<Lease> out = new ArrayList<>();
        try (ResultSet rs = p.executeQuery()) {
            while (rs.next()) {
                out.add(new Lease(rs.getInt(1), rs.getLong(2)));
            }
        }
        return out;
    }

}
