package dev.waymark.workflow.internal;

import dev.waymark.store.StoreUnavailableException;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The statements of awakeables: settle one (alone, or with the settlements other callers make at the
 * same moment), read one, check many, list an instance's, count the pending.
 */
public final class Awakeables {

    private static final Logger log = LoggerFactory.getLogger(Awakeables.class);

    /**
     * The most settlements one shared statement writes: each is a few statements inside it, and a
     * batch holds the locks of all its instances until it commits.
     */
    static final int MAX_SETTLE_BATCH = 100;

    /**
     * An awakeable's settlement state and owner: {@code status} is pending, completed, failed,
     * cancelled or abandoned; {@code payload} the completion's JSON text (or null); {@code failure}
     * the reason it was failed (or null); {@code name}, {@code id} and {@code generation} its workflow.
     */
    public record State(String status, String payload, String failure, String name, String id, int generation) {}

    /**
     * A settlement's outcome; {@code owner} is the awakeable's workflow when this call settled it
     * (the one it woke), else null (also when the workflow is gone by the time it is looked up).
     */
    public record Settled(SqlOutcomes.Settle outcome, Instances.Key owner) {}

    private static final String COLUMNS = "awakeable_id, name, id, generation, label, status,"
            + " payload::text, failure, created_at, completed_at";

    private final Sql sql;
    private final String s;
    private final SharedReads<UUID, Optional<State>> stateReads = new SharedReads<>(this::readStates, 1_000);
    private final SettleBatch settleBatch;
    private final SharedReads<SettleBatch.Settlement, SettleBatch.Answer> settlements = new SharedReads<>(
            this::settleTogether, MAX_SETTLE_BATCH);

    Awakeables(Sql sql) {
        this.sql = sql;
        this.s = "\"" + sql.schema() + "\".";
        this.settleBatch = new SettleBatch(sql, s);
    }

    /**
     * Settles an awakeable as {@link #settle} does, in one transaction with the settlements other
     * callers make at the same moment ({@code wf_settle_awakeables}, sent after each of them asked):
     * a lone caller's statement goes at once, callers arriving meanwhile share the next one. A
     * settlement the shared statement could not write (its instance's lock was held elsewhere, or the
     * statement failed as a whole) is made alone, so a neighbour's failure never fails it; a failure
     * of the database's availability is thrown to every caller of the statement (whether it
     * committed is unknown, and a settlement made again would report the first as made before).
     */
    public Settled settleShared(UUID awakeable, String status, String payload, String failure) {
        SettleBatch.Settlement mine = new SettleBatch.Settlement(awakeable, status, payload, failure);
        return switch (settlements.get(mine)) {
            case SettleBatch.Done done -> done.settled();
            case SettleBatch.Busy busy -> alone(mine, busy.owner());
            case SettleBatch.Alone a -> alone(mine, null);
        };
    }

    /** The shared statement for {@code batch}; each settlement is made alone if it fails as a whole. */
    List<SettleBatch.Answer> settleTogether(List<SettleBatch.Settlement> batch) {
        try {
            return settleBatch.settle(batch);
        } catch (StoreUnavailableException e) {
            throw e;
        } catch (RuntimeException e) {
            log.debug("waymark workflow: a batch of {} awakeable settlements failed; each is made alone: {}",
                    batch.size(), e.toString());
            return Collections.nCopies(batch.size(), new SettleBatch.Alone());
        }
    }

    /** How many settlements wait for a shared statement (for tests). */
    int settlementsWaiting() {
        return settlements.pending();
    }

    /** {@code wf_settle_awakeable} for {@code x}; its owner read after it settled unless {@code owner} is known. */
    private Settled alone(SettleBatch.Settlement x, Instances.Key owner) {
        SqlOutcomes.Settle outcome = settle(x.awakeable(), x.status(), x.payload(), x.failure());
        if (outcome != SqlOutcomes.Settle.SETTLED) {
            return new Settled(outcome, null);
        }
        return new Settled(outcome, owner != null
                ? owner
                : state(x.awakeable()).map(st -> new Instances.Key(st.name(), st.id())).orElse(null));
    }

    /**
     * {@code wf_settle_awakeable}: the first settlement wins and wakes its workflow in the same
     * transaction; the outcome says whether this call settled it, or how it was settled before, or
     * that the id is unknown.
     */
    public SqlOutcomes.Settle settle(UUID awakeable, String status, String payload, String failure) {
        return sql.query("settle awakeable " + awakeable,
                "SELECT " + s + "wf_settle_awakeable(?, ?, ?::jsonb, ?)", ps -> {
                    ps.setObject(1, awakeable);
                    ps.setString(2, status);
                    ps.setString(3, payload);
                    ps.setString(4, failure);
                }, rs -> SqlOutcomes.Settle.fromSql(Instances.single(rs)));
    }

    /**
     * The settlement state of one awakeable, read together with those other callers ask for at the
     * same moment (one statement, sent after each of them asked); empty when the id is unknown.
     */
    public Optional<State> sharedState(UUID awakeable) {
        return stateReads.get(awakeable);
    }

    private List<Optional<State>> readStates(List<UUID> awakeables) {
        java.util.Map<UUID, State> found = sql.query("read " + awakeables.size() + " awakeables",
                "SELECT awakeable_id, status, payload::text, failure, name, id, generation FROM " + s
                        + "workflow_awakeables WHERE awakeable_id = ANY(?)",
                ps -> ps.setArray(1, ps.getConnection().createArrayOf("uuid", awakeables.toArray())), rs -> {
                    java.util.Map<UUID, State> out = new java.util.HashMap<>();
                    while (rs.next()) {
                        out.put(rs.getObject(1, UUID.class), new State(rs.getString(2), rs.getString(3),
                                rs.getString(4), rs.getString(5), rs.getString(6), rs.getInt(7)));
                    }
                    return out;
                });
        return awakeables.stream().map(id -> Optional.ofNullable(found.get(id))).toList();
    }

    /** The settlement state of one awakeable; empty when the id is unknown. */
    public Optional<State> state(UUID awakeable) {
        return sql.query("read awakeable " + awakeable,
                "SELECT status, payload::text, failure, name, id, generation FROM " + s
                        + "wf_find_awakeable(?)",
                ps -> ps.setObject(1, awakeable),
                rs -> rs.next()
                        ? Optional.of(new State(rs.getString(1), rs.getString(2), rs.getString(3),
                                rs.getString(4), rs.getString(5), rs.getInt(6)))
                        : Optional.empty());
    }

    /**
     * Which of {@code awakeables} are no longer pending (settled, or abandoned by their instance's
     * end); one statement by primary key for all of them.
     */
    public List<UUID> settledAmong(List<UUID> awakeables) {
        if (awakeables.isEmpty()) {
            return List.of();
        }
        List<Optional<State>> states = readStates(awakeables);
        List<UUID> settled = new ArrayList<>();
        for (int k = 0; k < awakeables.size(); k++) {
            if (states.get(k).filter(st -> !"pending".equals(st.status())).isPresent()) {
                settled.add(awakeables.get(k));
            }
        }
        return settled;
    }

    /** Awakeables of an instance, newest generation first. */
    public List<AwakeableInfo> of(String name, String id) {
        return sql.query("read awakeables of " + name + "/" + id,
                "SELECT " + COLUMNS + " FROM " + s + "wf_awakeables(?, ?)", ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                }, Awakeables::infos);
    }

    /** One awakeable by id; empty when the id is unknown. */
    public Optional<AwakeableInfo> info(UUID awakeable) {
        return sql.query("read awakeable " + awakeable,
                "SELECT " + COLUMNS + " FROM " + s + "wf_find_awakeable(?)",
                ps -> ps.setObject(1, awakeable), rs -> infos(rs).stream().findFirst());
    }

    private static List<AwakeableInfo> infos(ResultSet rs) throws SQLException {
        List<AwakeableInfo> out = new ArrayList<>();
        while (rs.next()) {
            out.add(new AwakeableInfo(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getInt(4),
                    rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8), Sql.instant(rs, "created_at"),
                    Sql.instant(rs, "completed_at")));
        }
        return out;
    }

    /** Pending awakeables across all workflows ({@code wf_count_pending_awakeables}, schema version 9). */
    public long countPending() {
        return sql.count("count pending awakeables", "SELECT " + s + "wf_count_pending_awakeables()");
    }
}
