package dev.waymark.workflow.internal;

import dev.waymark.store.plumbing.TransactionBounds;
import dev.waymark.workflow.gc.FinishedWorkflow;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/** The SQL of garbage collection (schema version 10): candidates, and one instance collected per call. */
public final class CollectionSql {

    private final Sql sql;
    private final String s;

    /** Collection over the workflow tables of {@code schema}, transactions bounded by the default bounds. */
    public CollectionSql(DataSource dataSource, String schema) {
        this(dataSource, schema, TransactionBounds.DEFAULT);
    }

    /** Collection over the workflow tables of {@code schema}, transactions bounded by {@code bounds}. */
    public CollectionSql(DataSource dataSource, String schema, TransactionBounds bounds) {
        this.sql = new Sql(dataSource, schema, bounds);
        this.s = "\"" + schema + "\".";
    }

    /** {@code wf_gc_candidates}: up to {@code limit} collectable instances, oldest first. */
    public List<FinishedWorkflow> candidates(Duration retention, int limit) {
        return sql.query("list finished workflows to collect",
                "SELECT name, id, status, completed_at FROM " + s
                        + "wf_gc_candidates(? * interval '1 millisecond', ?)",
                ps -> {
                    ps.setLong(1, retention.toMillis());
                    ps.setInt(2, limit);
                }, rs -> {
                    List<FinishedWorkflow> out = new ArrayList<>();
                    while (rs.next()) {
                        out.add(new FinishedWorkflow(rs.getString(1), rs.getString(2),
                                WorkflowStatus.fromSql(rs.getString(3)), Sql.instant(rs, "completed_at")));
                    }
                    return out;
                });
    }

    /** {@code wf_collect}: deleted, busy, missing or kept. */
    public SqlOutcomes.Collect collect(String name, String id, Duration retention) {
        return sql.query("collect workflow " + name + "/" + id,
                "SELECT " + s + "wf_collect(?, ?, ? * interval '1 millisecond')", ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                    ps.setLong(3, retention.toMillis());
                }, rs -> {
                    rs.next();
                    return SqlOutcomes.Collect.fromSql(rs.getString(1));
                });
    }
}
