package dev.waymark.workflow.internal;

import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowStatus;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** Reads across instances: discovery of runnable ones, children, orphans, listings, counts. */
public final class Queries {

    /** A live child of a cancelled instance. */
    public record Orphan(Instances.Key child, Instances.Key parent) {}

    private final Sql sql;
    private final String s;

    Queries(Sql sql) {
        this.sql = sql;
        this.s = "\"" + sql.schema() + "\".";
    }

    /**
     * Runnable instances of the given workflow names, oldest first: running, or suspended with a due
     * wake time; not paced by a crash. Instances of other names never take a place in the batch.
     */
    public List<Instances.Key> discover(java.util.Collection<String> names, int limit) {
        return discover("discover runnable workflows", names, false, limit);
    }

    /** Runnable instances whose name is not among {@code names} (a deploy dropped their code), oldest first. */
    public List<Instances.Key> discoverUnknown(java.util.Collection<String> names, int limit) {
        return discover("find runnable workflows of unregistered names", names, true, limit);
    }

    /** {@code wf_discover} (schema version 9): walks the active instances whatever its plan's age. */
    private List<Instances.Key> discover(String action, java.util.Collection<String> names, boolean unknown,
            int limit) {
        return sql.query(action, "SELECT name, id FROM " + s + "wf_discover(?, ?, ?)", ps -> {
            ps.setArray(1, ps.getConnection().createArrayOf("text", names.toArray(String[]::new)));
            ps.setBoolean(2, unknown);
            ps.setInt(3, limit);
        }, Queries::keys);
    }

    /** Live (running or suspended) children of an instance, oldest first. */
    public List<Instances.Key> liveChildren(String name, String id) {
        return sql.query("read children of " + name + "/" + id,
                "SELECT name, id FROM " + s + "wf_children(?, ?, true)", ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                }, Queries::keys);
    }

    /**
     * Up to {@code limit} live children of cancelled instances ({@code wf_orphaned_children}, schema
     * V14), in no particular order; each comes back until it is cancelled or ends.
     */
    public List<Orphan> orphanedChildren(int limit) {
        return sql.query("read live children of cancelled workflows",
                "SELECT name, id, parent_name, parent_id FROM " + s + "wf_orphaned_children(?)",
                ps -> ps.setInt(1, limit), rs -> {
                    List<Orphan> out = new ArrayList<>();
                    while (rs.next()) {
                        out.add(new Orphan(new Instances.Key(rs.getString(1), rs.getString(2)),
                                new Instances.Key(rs.getString(3), rs.getString(4))));
                    }
                    return out;
                });
    }

    /** All children of an instance, oldest first. */
    public List<WorkflowInfo> children(String name, String id) {
        return sql.query("read children of " + name + "/" + id,
                "SELECT " + Instances.COLUMNS + " FROM " + s + "wf_children(?, ?, false)", ps -> {
                    ps.setString(1, name);
                    ps.setString(2, id);
                }, Queries::infos);
    }

    /**
     * A keyset page of up to {@code limit} instances ordered by (name, id), starting after
     * {@code after} (exclusive; null: from the start), filtered by {@code status} and {@code name}
     * when they are not null.
     */
    public List<WorkflowInfo> list(WorkflowStatus status, String name, Instances.Key after, int limit) {
        return sql.query("list workflows",
                "SELECT " + Instances.COLUMNS + " FROM " + s + "workflows WHERE (?::text IS NULL OR status = ?)"
                        + " AND (?::text IS NULL OR name = ?) AND (?::text IS NULL OR (name, id) > (?, ?))"
                        + " ORDER BY name, id LIMIT ?",
                ps -> {
                    String st = status == null ? null : status.sqlValue();
                    ps.setString(1, st);
                    ps.setString(2, st);
                    ps.setString(3, name);
                    ps.setString(4, name);
                    ps.setString(5, after == null ? null : after.name());
                    ps.setString(6, after == null ? null : after.name());
                    ps.setString(7, after == null ? null : after.id());
                    ps.setInt(8, limit);
                }, Queries::infos);
    }

    /** Instances a resume pass would pick up now ({@code wf_count_runnable}, schema version 9). */
    public long countRunnable() {
        return sql.count("count runnable workflows", "SELECT " + s + "wf_count_runnable()");
    }

    /** The runnable backlog as the database sees it now ({@code wf_backlog}, schema V19). */
    public dev.waymark.workflow.backpressure.WorkflowBacklog backlog(long inFlightHere) {
        return sql.query("measure the workflow backlog",
                "SELECT runnable, sleeping, waiting, oldest_waiting, pending_awakeables, sampled_at FROM " + s
                        + "wf_backlog()",
                ps -> {}, rs -> {
                    rs.next();
                    java.time.Instant sampled = Sql.instant(rs, "sampled_at");
                    java.time.Instant oldest = Sql.instant(rs, "oldest_waiting");
                    java.time.Duration age = oldest == null || oldest.isAfter(sampled)
                            ? java.time.Duration.ZERO
                            : java.time.Duration.between(oldest, sampled);
                    return new dev.waymark.workflow.backpressure.WorkflowBacklog(rs.getLong(1), rs.getLong(2),
                            rs.getLong(3), age,
                            rs.getLong(5), inFlightHere, sampled);
                });
    }

    private static List<Instances.Key> keys(ResultSet rs) throws SQLException {
        List<Instances.Key> out = new ArrayList<>();
        while (rs.next()) {
            out.add(new Instances.Key(rs.getString(1), rs.getString(2)));
        }
        return out;
    }

    private static List<WorkflowInfo> infos(ResultSet rs) throws SQLException {
        List<WorkflowInfo> out = new ArrayList<>();
        while (rs.next()) {
            out.add(Instances.info(rs));
        }
        return out;
    }
}
