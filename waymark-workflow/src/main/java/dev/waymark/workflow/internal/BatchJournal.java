package dev.waymark.workflow.internal;

import dev.waymark.workflow.status.WorkflowStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Group commit's statement ({@code wf_journal}): journal entries of distinct instances (starts,
 * steps, among them those that create an awakeable, completions) written in one transaction, each
 * with the outcome it would have alone.
 */
public final class BatchJournal {

    private final Sql sql;
    private final String s;

    /** The statement over {@code sql}'s schema ({@code s} is its quoted prefix). */
    BatchJournal(Sql sql, String s) {
        this.sql = sql;
        this.s = s;
    }

    /**
     * The outcome of one entry of {@link #journal}: for a start, {@code wf_start}'s outcome, status,
     * existing input and epoch; for an append, {@code wf_append}'s kind and detail; for an entry whose
     * lock was held elsewhere, kind {@code busy}.
     */
    public record Outcome(String kind, String detail, String existingInput, String epoch) {

        /** Whether the entry was left unwritten because a lock it needs was held elsewhere. */
        public boolean busy() {
            return "busy".equals(kind);
        }

        /** As an append's outcome. */
        public Instances.Appended appended() {
            return new Instances.Appended(SqlOutcomes.Append.fromSql(kind), detail);
        }

        /** As a start's outcome. */
        public Instances.Started started() {
            SqlOutcomes.Start start = SqlOutcomes.Start.fromSql(kind);
            if (start == SqlOutcomes.Start.PARENT_ENDED) { // detail: the parent's status, or 'missing'
                return new Instances.Started(false, "missing".equals(detail) ? null : WorkflowStatus.fromSql(detail),
                        null, 0,
                        true);
            }
            return new Instances.Started(start == SqlOutcomes.Start.CREATED, WorkflowStatus.fromSql(detail),
                    existingInput,
                    epoch == null ? 0 : Long.parseLong(epoch), false);
        }
    }

    /**
     * {@code wf_journal}: entries of distinct instances in one transaction, each with exactly the
     * outcome {@link Instances#start} or {@link Instances#append} would give it alone, or {@code busy} (not written) when
     * a lock it needs was held elsewhere. Outcomes are in entry order.
     */
    public List<Outcome> journal(List<JournalWrite> entries) {
        int n = entries.size();
        String[] names = new String[n];
        String[] ids = new String[n];
        Integer[] gens = new Integer[n];
        UUID[] eventIds = new UUID[n];
        String[] types = new String[n];
        String[] data = new String[n];
        Long[] epochs = new Long[n];
        String[] terminals = new String[n];
        String[] results = new String[n];
        String[] parentNames = new String[n];
        String[] parentIds = new String[n];
        String[] owners = new String[n];
        Long[] ttls = new Long[n];
        UUID[] awakeables = new UUID[n];
        String[] labels = new String[n];
        for (int i = 0; i < n; i++) {
            JournalWrite e = entries.get(i);
            names[i] = e.name();
            ids[i] = e.id();
            gens[i] = e.generation();
            eventIds[i] = e.eventId();
            types[i] = e.type();
            data[i] = e.data();
            epochs[i] = e.epoch();
            terminals[i] = e.terminal() == null ? null : e.terminal().sqlValue();
            results[i] = e.completedResult();
            if (e.start() != null) {
                parentNames[i] = e.start().parent() == null ? null : e.start().parent().name();
                parentIds[i] = e.start().parent() == null ? null : e.start().parent().id();
                owners[i] = e.start().owner();
                ttls[i] = e.start().ttl().toMillis();
            }
            if (e.awakeable() != null) {
                awakeables[i] = e.awakeable().id();
                labels[i] = e.awakeable().label();
            }
        }
        return sql.query("journal " + n + " entries", "SELECT " + s
                + "wf_journal(?, ?, ?, ?, ?, ?::jsonb[], ?, ?, ?::jsonb[], ?, ?, ?, ?, ?, ?)", ps -> {
                    java.sql.Connection c = ps.getConnection();
                    ps.setArray(1, c.createArrayOf("text", names));
                    ps.setArray(2, c.createArrayOf("text", ids));
                    ps.setArray(3, c.createArrayOf("int4", gens));
                    ps.setArray(4, c.createArrayOf("uuid", eventIds));
                    ps.setArray(5, c.createArrayOf("text", types));
                    ps.setArray(6, c.createArrayOf("text", data));
                    ps.setArray(7, c.createArrayOf("int8", epochs));
                    ps.setArray(8, c.createArrayOf("text", terminals));
                    ps.setArray(9, c.createArrayOf("text", results));
                    ps.setArray(10, c.createArrayOf("text", parentNames));
                    ps.setArray(11, c.createArrayOf("text", parentIds));
                    ps.setArray(12, c.createArrayOf("text", owners));
                    ps.setArray(13, c.createArrayOf("int8", ttls));
                    ps.setArray(14, c.createArrayOf("uuid", awakeables));
                    ps.setArray(15, c.createArrayOf("text", labels));
                }, rs -> {
                    rs.next();
                    String[] r = (String[]) rs.getArray(1).getArray();
                    List<Outcome> out = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        out.add(new Outcome(r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]));
                    }
                    return out;
                });
    }
}
