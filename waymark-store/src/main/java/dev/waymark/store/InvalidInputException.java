package dev.waymark.store;

import dev.waymark.core.WaymarkInputException;
import java.io.Serial;

/**
 * The input of an operation is invalid: a null, empty, reserved or over-long
 * stream name, an empty batch, a payload that is not JSON, and the like. What the store checks
 * itself is refused before any database work. A value the store passed on but PostgreSQL refused
 * (SQLSTATE {@code 22P02} invalid text representation, {@code 22P05} untranslatable character,
 * {@code 22023} invalid parameter value) is reported with this type too, after the statement failed:
 * the store's own transaction is rolled back, and an append made on the caller's connection has
 * aborted the caller's transaction, which the caller must roll back. Either way nothing of the
 * operation was written. The store's member of the {@link WaymarkInputException} branch.
 */
public class InvalidInputException extends WaymarkInputException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid input described by {@code message}. */
    public InvalidInputException(String message) {
        super(message);
    }

    /** An invalid input described by {@code message}, found while parsing {@code cause}. */
    public InvalidInputException(String message, Throwable cause) {
        super(message, cause);
    }
}
