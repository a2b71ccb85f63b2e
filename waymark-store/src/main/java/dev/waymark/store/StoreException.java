package dev.waymark.store;

import dev.waymark.core.WaymarkConfigException;
import dev.waymark.core.WaymarkException;
import dev.waymark.core.WaymarkInputException;
import java.io.Serial;

/**
 * The storage branch of {@link WaymarkException}: the database failed, refused or reported a
 * conflict. Unchecked; the message carries the state that explains the failure and the cause is
 * always kept. {@link #sqlState()} names the database's SQLSTATE when the failure came from the
 * database. Invalid configuration ({@link WaymarkConfigException}) and invalid input
 * ({@link WaymarkInputException}) are the other branches, not subtypes of this one.
 */
public class StoreException extends WaymarkException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String sqlState;

    /** A failure with no database cause. */
    public StoreException(String message) {
        this(message, null, null);
    }

    /** A failure caused by {@code cause}, with the database's SQLSTATE when there is one. */
    public StoreException(String message, String sqlState, Throwable cause) {
        super(message, cause);
        this.sqlState = sqlState;
    }

    /** The SQLSTATE of the database error behind this failure, or {@code null}. */
    public String sqlState() {
        return sqlState;
    }

    /** Whether repeating the same operation may succeed (transient conflicts, lost connections). */
    public boolean isRetryable() {
        return false;
    }
}
