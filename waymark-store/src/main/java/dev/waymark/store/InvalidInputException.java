package dev.waymark.store;

import java.io.Serial;

/**
 * The input of an operation is invalid: a null, empty, reserved or over-long
 * stream name, an empty batch, a payload that is not JSON, and the like. Raised before any
 * database work, so nothing was written.
 */
public class InvalidInputException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid input described by {@code message}. */
    public InvalidInputException(String message) {
        super(message);
    }

    /** An invalid input described by {@code message}, found while parsing {@code cause}. */
    public InvalidInputException(String message, Throwable cause) {
        super(message, null, cause);
    }
}
