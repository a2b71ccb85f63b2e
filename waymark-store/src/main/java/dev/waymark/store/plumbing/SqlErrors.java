package dev.waymark.store.plumbing;

import dev.waymark.core.WaymarkException;
import dev.waymark.store.AppendRefusedException;
import dev.waymark.store.DuplicateEventException;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.SchemaNotMigratedException;
import dev.waymark.store.StoreException;
import dev.waymark.store.StoreUnavailableException;
import dev.waymark.store.TransientStoreException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * Classifies database failures by SQLSTATE: connection (08, 57), transient (class 40: 40001
 * serialization failure, 40P01 deadlock, and the rest of the class),
 * missing schema objects (3F000, 42P01, 42883), constraint conflicts (23505), and the rest,
 * which fail fast. Causes are always kept.
 */
public final class SqlErrors {

    /** Appended inside a transaction that already holds an xid. */
    public static final String APPEND_AFTER_WRITE = "WM001";
    /** Appended at an isolation level other than READ COMMITTED. */
    public static final String APPEND_ISOLATION = "WM002";
    /** An exact expected version did not match. */
    public static final String WRONG_VERSION = "WM010";
    /** The stream is missing or soft-deleted. */
    public static final String STREAM_NOT_FOUND = "WM011";
    /** The stream already exists. */
    public static final String STREAM_EXISTS = "WM012";

    /** A lock wait ran out ({@code lock_timeout}) or a NOWAIT lock was taken. */
    static final String LOCK_NOT_AVAILABLE = "55P03";

    private static final Pattern DUPLICATE_ID = Pattern.compile("\\(event_id\\)=\\(([0-9a-fA-F-]{36})\\)");

    private SqlErrors() {}

    /**
     * Whether the failure is of SQLSTATE class 40 (transaction rollback: a serialization failure,
     * a deadlock, ...): the transaction was rolled back, and trying it again may succeed.
     */
    public static boolean isTransient(SQLException e) {
        String state = e.getSQLState();
        return state != null && state.startsWith("40");
    }

    /**
     * Classifies {@code e}, raised while doing {@code action} (e.g. "append to stream 'x'"), in {@code schema}: a
     * {@link StoreException}, or an {@link InvalidInputException} for a value the database refused.
     */
    public static WaymarkException translate(SQLException e, String action, String schema) {
        String state = e.getSQLState();
        String detail = action + " failed: " + e.getMessage();
        if (e instanceof SQLTransientConnectionException || state == null) {
            return new StoreUnavailableException(action + " failed: database unavailable: " + e.getMessage(), state, e);
        }
        if (state.startsWith("08") || state.startsWith("57") || state.equals("53300")) {
            return new StoreUnavailableException(action + " failed: database unavailable: " + e.getMessage(), state, e);
        }
        if (isTransient(e) || LOCK_NOT_AVAILABLE.equals(state)) {
            // a lock wait that ran out (lock_timeout) is as worth retrying as a statement timeout
            return new TransientStoreException(detail, state, e);
        }
        switch (state) {
            case "3F000", "42P01", "42883" -> {
                return new SchemaNotMigratedException(schema, state, e);
            }
            case APPEND_AFTER_WRITE, APPEND_ISOLATION -> {
                return new AppendRefusedException(action + " refused: " + serverMessage(e), state, e);
            }
            case "23505" -> {
                if ("events_event_id_key".equals(constraint(e))) {
                    UUID id = duplicateId(e);
                    return new DuplicateEventException(action + " failed: event id "
                            + (id == null ? "(unknown)" : id) + " is already stored", id, state, e);
                }
                return new StoreException(detail, state, e);
            }
            case "22P02", "22P05", "22023" -> {
                return new InvalidInputException(action + " failed: the database refused a value: " + e.getMessage(),
                        e);
            }
            default -> {
                return new StoreException(detail, state, e);
            }
        }
    }

    /** The server's primary message, without pgjdbc's prefix. */
    public static String serverMessage(SQLException e) {
        ServerErrorMessage m = e instanceof PSQLException p ? p.getServerErrorMessage() : null;
        if (m == null) {
            return e.getMessage();
        }
        return m.getHint() == null ? m.getMessage() : m.getMessage() + " (" + m.getHint() + ")";
    }

    /** The server's DETAIL field, or null. */
    public static String serverDetail(SQLException e) {
        ServerErrorMessage m = e instanceof PSQLException p ? p.getServerErrorMessage() : null;
        return m == null ? null : m.getDetail();
    }

    private static String constraint(SQLException e) {
        ServerErrorMessage m = e instanceof PSQLException p ? p.getServerErrorMessage() : null;
        return m == null ? null : m.getConstraint();
    }

    private static UUID duplicateId(SQLException e) {
        String detail = serverDetail(e);
        if (detail == null) {
            return null;
        }
        Matcher matcher = DUPLICATE_ID.matcher(detail);
        return matcher.find() ? UUID.fromString(matcher.group(1)) : null;
    }
}
