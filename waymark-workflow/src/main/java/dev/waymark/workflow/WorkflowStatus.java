package dev.waymark.workflow;

import java.util.Locale;

/** Where a workflow instance is in its life. Completed, cancelled and failed are terminal and final. */
public enum WorkflowStatus {
    /** Started or woken, with work to do; the resume worker runs it unless a live lease holds it. */
    RUNNING,
    /** Parked on a sleep, an awakeable or a child; invisible to discovery until its wake source resolves. */
    SUSPENDED,
    /** The body returned; the result is stored. */
    COMPLETED,
    /** Cancelled by an operator, a parent, or a client. */
    CANCELLED,
    /** Failed for good: its crash budget ran out, or it was marked failed. */
    FAILED;

    /** Whether no further step can ever be journaled. */
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
