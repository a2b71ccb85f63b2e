package dev.waymark.cli;

import dev.waymark.cli.Output.StoredJson;
import dev.waymark.workflow.status.WorkflowInfo;
import java.time.Instant;

/** How the {@code workflows} subcommands print instances, journal entries and awakeables (as text and JSON). */
final class WorkflowRows {

    private WorkflowRows() {}

    /** One instance as printed. */
    record Row(String name, String id, String status, int generation, int attempts, String lastError, String failure,
            String waitingOn, String wakeAfter, String nextAttemptAt, String leaseOwner, long leaseEpoch,
            String leaseExpiresAt, String parentName, String parentId, String createdAt, String updatedAt,
            String completedAt) {}

    /** One journal entry as printed. */
    record EntryRow(int generation, long version, String eventId, String type, String step, StoredJson data,
            String recordedAt) {}

    /** One awakeable as printed. */
    record AwakeableRow(String id, int generation, String label, String status, StoredJson value, String failure,
            String createdAt, String completedAt) {}

    /** An instance as printed. */
    static Row row(WorkflowInfo w) {
        return new Row(w.name(), w.id(), w.status().sqlValue(), w.generation(), w.attempts(), w.lastError(),
                w.failure(), w.waitingOn(), text(w.wakeAfter()), text(w.nextAttemptAt()), w.leaseOwner(),
                w.leaseEpoch(), text(w.leaseExpiresAt()), w.parentName(), w.parentId(), text(w.createdAt()),
                text(w.updatedAt()), text(w.completedAt()));
    }

    /** An instant as ISO-8601 text, or null. */
    static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }

    /** A value as text, {@code -} for none. */
    static String dash(Object value) {
        return value == null ? "-" : value.toString();
    }

    /** Stored JSON as one line, {@code -} for none. */
    static String compact(StoredJson json) {
        return json == null ? "-" : json.json();
    }
}
