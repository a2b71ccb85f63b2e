package dev.waymark.workflow.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Group commit's statement for awakeable settlements ({@code wf_settle_awakeables}): settlements
 * of any awakeables written in one transaction, in order, each with the outcome it would have alone,
 * or {@link Busy} (not written) when its instance's lock was held elsewhere.
 */
final class SettleBatch {

    /** One settlement: the awakeable, the status it is settled with, its payload (JSON) or failure. */
    record Settlement(UUID awakeable, String status, String payload, String failure) {}

    /** What the batch did with one settlement. */
    sealed interface Answer permits Done, Busy, Alone {}

    /** Written or refused exactly as {@code wf_settle_awakeable} would write or refuse it alone. */
    record Done(Awakeables.Settled settled) implements Answer {}

    /** Not written: the instance lock of {@code owner} was held elsewhere; settle it alone. */
    record Busy(Instances.Key owner) implements Answer {}

    /** Not written: the batch failed as a whole; settle it alone. */
    record Alone() implements Answer {}

    private final Sql sql;
    private final String s;

    /** The statement over {@code sql}'s schema ({@code s} is its quoted prefix). */
    SettleBatch(Sql sql, String s) {
        this.sql = sql;
        this.s = s;
    }

    /** {@code wf_settle_awakeables}: one answer per settlement, in order; never {@link Alone}. */
    List<Answer> settle(List<Settlement> settlements) {
        int n = settlements.size();
        UUID[] ids = new UUID[n];
        String[] statuses = new String[n];
        String[] payloads = new String[n];
        String[] failures = new String[n];
        for (int i = 0; i < n; i++) {
            Settlement x = settlements.get(i);
            ids[i] = x.awakeable();
            statuses[i] = x.status();
            payloads[i] = x.payload();
            failures[i] = x.failure();
        }
        return sql.query("settle " + n + " awakeables",
                "SELECT " + s + "wf_settle_awakeables(?, ?, ?::jsonb[], ?)", ps -> {
                    java.sql.Connection c = ps.getConnection();
                    ps.setArray(1, c.createArrayOf("uuid", ids));
                    ps.setArray(2, c.createArrayOf("text", statuses));
                    ps.setArray(3, c.createArrayOf("text", payloads));
                    ps.setArray(4, c.createArrayOf("text", failures));
                }, rs -> {
                    rs.next();
                    String[] r = (String[]) rs.getArray(1).getArray();
                    List<Answer> out = new ArrayList<>(n);
                    for (int i = 0; i < n; i++) {
                        out.add(answer(r[3 * i], r[3 * i + 1], r[3 * i + 2]));
                    }
                    return out;
                });
    }

    private static Answer answer(String outcome, String name, String id) {
        Instances.Key owner = name == null ? null : new Instances.Key(name, id);
        if ("busy".equals(outcome)) {
            return new Busy(owner);
        }
        SqlOutcomes.Settle settle = SqlOutcomes.Settle.fromSql(outcome);
        return new Done(new Awakeables.Settled(settle, settle == SqlOutcomes.Settle.SETTLED ? owner : null));
    }
}
