package dev.waymark.workflow.status;

import dev.waymark.workflow.WorkflowClient;
import java.util.Locale;

/**
 * Where a workflow instance is in its life. Completed, cancelled and failed are terminal: no run is
 * under way and none is scheduled. Completed and cancelled are final; failed is final unless an
 * operator revives the instance with {@link WorkflowClient#retry}, which sets it back to
 * {@link #RUNNING} (keeping its journal, so it resumes where it failed).
 */
public enum WorkflowStatus {
    /** Started or woken, with work to do; the resume worker runs it unless a live lease holds it. */
    RUNNING,
    /** Parked on a sleep, an awakeable or a child; invisible to discovery until its wake source resolves. */
    SUSPENDED,
    /** The body returned; the result is stored. */
    COMPLETED,
    /** Cancelled by an operator, a parent, or a client. */
    CANCELLED,
    /**
     * Failed: its crash budget ran out, or it was marked failed. Nothing runs it again on its own;
     * {@link WorkflowClient#retry} revives it to {@link #RUNNING} with a fresh attempt budget.
     */
    FAILED;

    /**
     * Whether the instance has ended: no run is under way or scheduled, and no step is journaled
     * while it stays so. True for {@link #COMPLETED} and {@link #CANCELLED}, which never change
     * again, and for {@link #FAILED}, which changes only by {@link WorkflowClient#retry}.
     */
    public boolean isTerminal() {
        return this == COMPLETED || this == CANCELLED || this == FAILED;
    }

    /** The value stored in the database. */
    public String sqlValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a stored value. */
    public static WorkflowStatus fromSql(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
