package dev.waymark.workflow.internal;

import dev.waymark.store.plumbing.TransactionBounds;
import dev.waymark.workflow.status.JournalEntry;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowStatus;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The statements of workflow instances: starts, journal entries (alone or in shared batches),
 * suspensions, continue-as-new, retries, the database clock, and the reads of one instance. Awakeables, leases and reads across instances have
 * their own classes ({@link #awakeables()}, {@link #leases()}, {@link #queries()}) on the same data source.
 */
public final class Instances {

    /** The outcome of {@code wf_append}: a kind and its detail. */
    public record Appended(SqlOutcomes.Append kind, String detail) {}

    /**
     * The outcome of {@code wf_start}: created, or the existing instance's status and input; for a
     * child's start, {@code parentEnded} when its parent is no longer running or suspended (nothing
     * was written; {@code status} is then the parent's, null when it is gone).
     */
    public record Started(boolean created, WorkflowStatus status, String existingInput, long epoch,
            boolean parentEnded) {}

    /** An instance row with its payloads. */
    public record Row(WorkflowInfo info, String input, String result) {}

    /** A workflow to look at: name and id. */
    public record Key(String name, String id) {}

    static final String COLUMNS = "name, id, generation, status, attempts, last_error, failure, waiting_on,"
            + " wake_after, next_attempt_at, lease_owner, lease_epoch, lease_expires_at, parent_name, parent_id,"
            + " created_at, updated_at, completed_at";

    private final Sql sql;
    private final String s;
    private final Awakeables awakeables;
    private final Leases leases;
    private final Queries queries;
    private final BatchJournal batches;
    private volatile StepBatcher batcher;
    private final SharedReads<Long, Instant> clockReads = new SharedReads<>(this::readClock, Integer.MAX_VALUE);

    /** Statements on {@code schema} through {@code dataSource}, transactions bounded by the default bounds. */
    public Instances(DataSource dataSource, String schema) {
        this(dataSource, schema, TransactionBounds.DEFAULT);
    }

    /** Statements on {@code schema} through {@code dataSource}, transactions bounded by {@code bounds}. */
    public Instances(DataSource dataSource, String schema, TransactionBounds bounds) {
        this.sql = new Sql(dataSource, schema, bounds);
        this.s = "\"" + schema + "\".";
        this.awakeables = new Awakeables(sql);
        this.leases = new Leases(sql);
        this.queries = new Queries(sql);
        this.batches = new BatchJournal(sql, s);
    }

    /** The reads across instances (discovery, children, orphans, listings, counts), on the same data source. */
    public Queries queries() {
        return queries;
    }

    /** The statements of awakeables, on the same data source. */
    public Awakeables awakeables() {
        return awakeables;
    }

    /** The statements of instance leases, on the same data source. */
    public Leases leases() {
        return leases;
    }

    /**
     * From now on, {@link #appendEntry} shares transactions among concurrent runs through
     * {@code flushers} threads named after {@code name}; close the returned handle to stop.
     */
    public AutoCloseable batchSteps(int flushers, int maxBatch, String name) {
        StepBatcher b = new StepBatcher(this, flushers, maxBatch, name);
        batcher = b;
        return () -> {
            batcher = null;
            b.close();
        };
    }

    /**
     * Journals {@code entry}: in a shared transaction when batching is on and its locks are free,
     * else on its own ({@link #append}). Same outcomes either way.
     */
    public Appended appendEntry(JournalWrite entry) {
        StepBatcher b = batcher;
        BatchJournal.Outcome o = b == null ? null : b.journal(entry);
        return o != null ? o.appended() : appendAlone(entry);
    }

    /** {@link #append} of {@code entry}, in a transaction of its own. */
    Appended appendAlone(JournalWrite entry) {
        if (entry.awakeable() != null) {
            return appendAwakeableAlone(entry);
        }
        return append(entry.name(), entry.id(), entry.generation(), entry.eventId(), entry.type(), entry.data(),
                entry.epoch(), entry.terminal(), entry.completedResult(), null);
    }

    /**
     * Durable, idempotent start ({@code wf_start}); leased to {@code owner} at a fresh epoch when given.
     * In a shared transaction when batching is on and the instance's lock is free, else on its own.
     * Same outcome either way.
     */
    public Started start(String name, String id, String input, UUID eventId, Key parent, String owner, Duration ttl) {
        StepBatcher b = batcher;
        BatchJournal.Outcome o = b == null
                ? null
                : b.journal(JournalWrite.start(name, id, input, eventId, parent, owner, ttl));
        return o != null ? o.started() : startAlone(name, id, input, eventId, parent, owner, ttl);
    }

    /** {@code wf_start} in a transaction of its own. */
    Started startAlone(String name, String id, String input, UUID eventId, Key parent, String owner, Duration ttl) {
        return sql.query("start workflow " + name + "/" + id,
                "SELECT " + s + "wf_start(?, ?, ?::jsonb, ?, ?, ?, ?, ?)", ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                    ps.setString(3, input);
                    ps.setObject(4, eventId);
                    ps.setString(5, parent == null ? null : parent.name());
                    ps.setString(6, parent == null ? null : parent.id());
                    ps.setString(7, owner);
                    ps.setLong(8, ttl.toMillis());
                }, rs -> {
                    rs.next();
                    String[] r = (String[]) rs.getArray(1).getArray();
                    return new BatchJournal.Outcome(r[0], r[1], r[2], r[3]).started();
                });
    }

    /** {@code wf_append}: one journal entry, fenced on {@code epoch} when not null. */
    public Appended append(String name, String id, int generation, UUID eventId, String type, String data,
            Long epoch, WorkflowStatus terminal, String result, String failure) {
        return sql.query("journal " + type + " of workflow " + name + "/" + id, appendSql(), ps -> {
            ps.setString(1, name);
            ps.setString(2, id);
            ps.setInt(3, generation);
            ps.setObject(4, eventId);
            ps.setString(5, type);
            ps.setString(6, data);
            ps.setObject(7, epoch, Types.BIGINT); // null: unfenced
            ps.setString(8, terminal == null ? null : terminal.sqlValue());
            ps.setString(9, result);
            ps.setString(10, failure);
        }, Instances::appended);
    }

    /**
     * Journals the step {@code entry} that records a new awakeable's id and, only when this entry is
     * the one written, registers the awakeable ({@code label}) in the same transaction: an awakeable
     * is pending exactly when its id is journaled. A run whose entry is refused (its lease taken over,
     * its instance cancelled) or loses to another writer's entry leaves no row behind. Shares a
     * transaction with other runs' entries when batching is on ({@link #appendEntry}), else on its own.
     */
    public Appended appendAwakeable(JournalWrite entry, UUID awakeable, String label) {
        return appendEntry(entry.withAwakeable(awakeable, label));
    }

    /** {@link #appendAwakeable} in a transaction of its own. */
    private Appended appendAwakeableAlone(JournalWrite entry) {
        UUID awakeable = entry.awakeable().id();
        String label = entry.awakeable().label();
        // one statement: the row is inserted only when the entry was written
        return sql.query("journal awakeable " + label + " of workflow " + entry.name() + "/" + entry.id(),
                "WITH a AS (SELECT " + s + "wf_append(?, ?, ?, ?, ?, ?::jsonb, ?, NULL, NULL::jsonb, NULL) AS r),"
                        + " w AS (INSERT INTO " + s + "workflow_awakeables (awakeable_id, name, id, generation, label)"
                        + " SELECT ?, ?, ?, ?, ? FROM a WHERE a.r[1] = 'appended' RETURNING 1)"
                        + " SELECT a.r, (SELECT count(*) FROM w) FROM a",
                ps -> {
                    ps.setString(1, entry.name());
                    ps.setString(2, entry.id());
                    ps.setInt(3, entry.generation());
                    ps.setObject(4, entry.eventId());
                    ps.setString(5, entry.type());
                    ps.setString(6, entry.data());
                    ps.setObject(7, entry.epoch(), Types.BIGINT);
                    ps.setObject(8, awakeable);
                    ps.setString(9, entry.name());
                    ps.setString(10, entry.id());
                    ps.setInt(11, entry.generation());
                    ps.setString(12, label);
                }, Instances::appended);
    }

    private String appendSql() {
        return "SELECT " + s + "wf_append(?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?::jsonb, ?)";
    }

    private static Appended appended(ResultSet rs) throws SQLException {
        rs.next();
        String[] r = (String[]) rs.getArray(1).getArray();
        return new Appended(SqlOutcomes.Append.fromSql(r[0]), r[1]);
    }

    /**
     * {@code wf_journal}: entries of distinct instances in one transaction, each with exactly the
     * outcome {@link #startAlone} or {@link #append} would give it (see {@link BatchJournal}).
     */
    public List<BatchJournal.Outcome> journal(List<JournalWrite> entries) {
        return batches.journal(entries);
    }

    /**
     * Journals a terminal marker ({@code WorkflowCancelled}, {@code WorkflowFailed}) on the instance's
     * current generation, once more on the new one if continue-as-new closed it meanwhile. The
     * outcome: {@code appended}; {@code refused} with the terminal status that won; {@code missing};
     * or {@code lease_lost}. Markers get a random time-ordered id, so a failure can repeat after a retry.
     */
    public Appended appendTerminal(String name, String id, String type, String data, Long epoch,
            WorkflowStatus status, String failure) {
        for (int tries = 0; tries < 10; tries++) {
            Optional<Row> row = find(name, id);
            if (row.isEmpty()) {
                return new Appended(SqlOutcomes.Append.MISSING, null);
            }
            if (row.get().info().status().isTerminal()) {
                return new Appended(SqlOutcomes.Append.REFUSED, row.get().info().status().sqlValue());
            }
            Appended a = append(name, id, row.get().info().generation(),
                    dev.waymark.store.plumbing.UuidV7.next(java.time.Clock.systemUTC()), type, data, epoch, status,
                    null, failure);
            if (a.kind() != SqlOutcomes.Append.STALE) {
                return a;
            }
        }
        throw new dev.waymark.workflow.exception.WorkflowException(
                "journaling " + type + " of workflow " + name + "/" + id
                        + " kept racing continue-as-new");
    }

    /** {@code wf_suspend}: parks the run unless its wake source resolved. */
    public SqlOutcomes.Suspend suspend(String name, String id, int generation, Long epoch, String waitingOn,
            Instant wakeAfter,
            UUID awakeable, Key child) {
        return sql.query("suspend workflow " + name + "/" + id,
                "SELECT " + s + "wf_suspend(?, ?, ?, ?, ?, ?, ?, ?, ?)", ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                    ps.setInt(3, generation);
                    ps.setObject(4, epoch, Types.BIGINT); // null: unfenced
                    ps.setString(5, waitingOn);
                    ps.setObject(6, wakeAfter == null ? null : java.sql.Timestamp.from(wakeAfter));
                    ps.setObject(7, awakeable);
                    ps.setString(8, child == null ? null : child.name());
                    ps.setString(9, child == null ? null : child.id());
                }, rs -> SqlOutcomes.Suspend.fromSql(single(rs)));
    }

    /** {@code wf_rotate}: closes {@code generation} and opens the next with {@code seed}. */
    public SqlOutcomes.Rotate rotate(String name, String id, int generation, Long epoch, String seed) {
        return sql.query("continue workflow " + name + "/" + id + " as new",
                "SELECT " + s + "wf_rotate(?, ?, ?, ?, ?::jsonb, ?, ?)", ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                    ps.setInt(3, generation);
                    ps.setObject(4, epoch, Types.BIGINT); // null: unfenced
                    ps.setString(5, seed);
                    ps.setObject(6, Ids.entryId(name, id, generation, "__continued_as_new__"));
                    ps.setObject(7, Ids.entryId(name, id, generation + 1, "__started__"));
                }, rs -> SqlOutcomes.Rotate.fromSql(single(rs)));
    }

    /** The instance row with its input and result. */
    public Optional<Row> find(String name, String id) { // wf_find (schema version 9): by primary key whatever its plan's age
        return sql.query("read workflow " + name + "/" + id,
                "SELECT " + COLUMNS + ", input::text AS input_json, result::text AS result_json FROM " + s
                        + "wf_find(?, ?)",
                ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                }, rs -> rs.next()
                        ? Optional.of(new Row(info(rs), rs.getString("input_json"), rs.getString("result_json")))
                        : Optional.empty());
    }

    /** The journal of one generation, in order. */
    public List<JournalEntry> journal(String name, String id, int generation) {
        return sql.query("read the journal of " + name + "/" + id,
                "SELECT stream_version, event_id, event_type, step, data::text, created_at FROM " + s
                        + "wf_read_journal(?)",
                ps -> ps.setString(1,
                        Ids.stream(name, id, generation)),
                rs -> {
                    List<JournalEntry> out = new ArrayList<>();
                    while (rs.next()) {
                        out.add(new JournalEntry(generation, rs.getLong(1), rs.getObject(2, UUID.class),
                                rs.getString(3), rs.getString(4), rs.getString(5), Sql.instant(rs, "created_at")));
                    }
                    return out;
                });
    }

    /**
     * The database clock plus {@code delay} (whole milliseconds). Concurrent callers share one read
     * of the clock, sent after each of them asked.
     */
    public Instant dbNowPlus(Duration delay) {
        return clockReads.get(delay.toMillis());
    }

    private List<Instant> readClock(List<Long> delaysMillis) {
        Instant now = sql.query("read the database clock", "SELECT " + s + "waymark_now()", ps -> {}, rs -> {
            rs.next();
            return rs.getTimestamp(1).toInstant();
        });
        return delaysMillis.stream().map(now::plusMillis).toList();
    }

    /** Revives a failed instance: running again with a fresh attempt budget. False if it is not failed. */
    public boolean retry(String name, String id) {
        return sql.query("retry workflow " + name + "/" + id, "SELECT " + s + "wf_retry(?, ?)", ps -> {
            ps.setString(1, name);
            ps.setString(2, id);
        }, rs -> rs.next() && rs.getBoolean(1));
    }

    static String single(ResultSet rs) throws SQLException {
        rs.next();
        return rs.getString(1);
    }

    static WorkflowInfo info(ResultSet rs) throws SQLException {
        return new WorkflowInfo(rs.getString("name"), rs.getString("id"), rs.getInt("generation"),
                WorkflowStatus.fromSql(rs.getString("status")), rs.getInt("attempts"), rs.getString("last_error"),
                rs.getString("failure"), rs.getString("waiting_on"), Sql.instant(rs, "wake_after"),
                Sql.instant(rs, "next_attempt_at"), rs.getString("lease_owner"), rs.getLong("lease_epoch"),
                Sql.instant(rs, "lease_expires_at"), rs.getString("parent_name"), rs.getString("parent_id"),
                Sql.instant(rs, "created_at"), Sql.instant(rs, "updated_at"), Sql.instant(rs, "completed_at"));
    }
}
