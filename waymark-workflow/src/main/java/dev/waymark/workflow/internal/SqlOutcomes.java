package dev.waymark.workflow.internal;

import dev.waymark.store.StoreException;
import java.util.Arrays;
import java.util.Locale;

/**
 * The outcome codes Waymark's workflow SQL functions return, as enums: one per function (or family
 * of functions sharing one set). Each {@code fromSql} maps the function's text result and fails
 * loudly, with a {@link StoreException} naming the function and the values it knows, on a value it
 * does not know (a schema newer or older than this code), instead of falling through a
 * {@code default} branch.
 */
public final class SqlOutcomes {

    private SqlOutcomes() {}

    /** Outcome of a journal append ({@code wf_append}, and the append entries of {@code wf_journal}). */
    public enum Append {
        /** The entry was written. */
        APPENDED,
        /** An entry with this id was already journaled; its detail is the stored result. */
        PRESENT,
        /** The instance is terminal; the detail is its status. */
        REFUSED,
        /** The instance's lease epoch moved; the detail is the current epoch. */
        LEASE_LOST,
        /** The instance moved to another generation (continue-as-new); the detail is it. */
        STALE,
        /** The instance does not exist. */
        MISSING,
        /** Not written: a lock it needs was held elsewhere ({@code wf_journal} only). */
        BUSY;

        /** The value for {@code sql}; throws on an unknown one. */
        public static Append fromSql(String sql) {
            return parse(Append.class, "wf_append", sql);
        }
    }

    /** Outcome of a start ({@code wf_create}, via {@code wf_start} and {@code wf_journal}). */
    public enum Start {
        /** The instance was created. */
        CREATED,
        /** The instance already existed. */
        EXISTS,
        /** The parent it would be a child of has ended (or does not exist). */
        PARENT_ENDED;

        /** The value for {@code sql}; throws on an unknown one. */
        public static Start fromSql(String sql) {
            return parse(Start.class, "wf_create", sql);
        }
    }

    /** Outcome of {@code wf_suspend}. */
    public enum Suspend {
        /** The run is suspended until what it waits for resolves. */
        SUSPENDED,
        /** What it waits for resolved meanwhile: go on instead of suspending. */
        RESOLVED,
        /** The instance's lease epoch moved. */
        LEASE_LOST,
        /** The instance does not exist. */
        MISSING,
        /** The instance moved to another generation. */
        STALE,
        /** The instance completed meanwhile. */
        COMPLETED,
        /** The instance was cancelled meanwhile. */
        CANCELLED,
        /** The instance failed meanwhile. */
        FAILED;

        /** The value for {@code sql}; throws on an unknown one. */
        public static Suspend fromSql(String sql) {
            return parse(Suspend.class, "wf_suspend", sql);
        }
    }

    /** Outcome of {@code wf_rotate} (continue-as-new). */
    public enum Rotate {
        /** The next generation was started. */
        ROTATED,
        /** The instance's lease epoch moved. */
        LEASE_LOST,
        /** The instance does not exist. */
        MISSING,
        /** The instance moved to another generation. */
        STALE,
        /** The instance completed meanwhile. */
        COMPLETED,
        /** The instance was cancelled meanwhile. */
        CANCELLED,
        /** The instance failed meanwhile. */
        FAILED;

        /** The value for {@code sql}; throws on an unknown one. */
        public static Rotate fromSql(String sql) {
            return parse(Rotate.class, "wf_rotate", sql);
        }
    }

    /** Outcome of {@code wf_settle_awakeable}. */
    public enum Settle {
        /** This call settled the awakeable. */
        SETTLED,
        /** No such awakeable (never created, or collected). */
        UNKNOWN,
        /** Completed before. */
        ALREADY_COMPLETED,
        /** Failed before. */
        ALREADY_FAILED,
        /** Cancelled before. */
        ALREADY_CANCELLED,
        /** Abandoned before (its workflow went on without it). */
        ALREADY_ABANDONED;

        /** The value for {@code sql}; throws on an unknown one. */
        public static Settle fromSql(String sql) {
            return parse(Settle.class, "wf_settle_awakeable", sql);
        }
    }

    /** The status column of an awakeable. */
    public enum AwakeableStatus {
        /** Not settled yet. */
        PENDING,
        /** Completed with a value. */
        COMPLETED,
        /** Failed with a reason. */
        FAILED,
        /** Cancelled. */
        CANCELLED,
        /** Abandoned (its workflow went on without it). */
        ABANDONED;

        /** The value for {@code sql}; throws on an unknown one. */
        public static AwakeableStatus fromSql(String sql) {
            return parse(AwakeableStatus.class, "awakeables.status", sql);
        }
    }

    /** Outcome of {@code wf_collect}. */
    public enum Collect {
        /** The instance and its journal were deleted. */
        DELETED,
        /** Kept: not finished long enough ago, or not finished. */
        KEPT,
        /** Not collected now: a lock it needs was held elsewhere. */
        BUSY,
        /** The instance does not exist. */
        MISSING;

        /** The value for {@code sql}; throws on an unknown one. */
        public static Collect fromSql(String sql) {
            return parse(Collect.class, "wf_collect", sql);
        }
    }

    /** {@code sql} as a constant of {@code type} (its name in lower case), or a loud failure. */
    static <E extends Enum<E>> E parse(Class<E> type, String function, String sql) {
        if (sql != null) {
            for (E e : type.getEnumConstants()) {
                if (e.name().toLowerCase(Locale.ROOT).equals(sql)) {
                    return e;
                }
            }
        }
        throw new StoreException(function + " returned " + (sql == null ? "null" : "'" + sql + "'")
                + ", which this version of Waymark does not know (expected one of "
                + Arrays.stream(type.getEnumConstants()).map(e -> e.name().toLowerCase(Locale.ROOT)).toList()
                + "); the schema and the code do not match");
    }
}
