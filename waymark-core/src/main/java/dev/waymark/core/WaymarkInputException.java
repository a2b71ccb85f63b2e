package dev.waymark.core;

import java.io.Serial;

/**
 * The input branch of {@link WaymarkException}: the input of one call is invalid (a null, blank,
 * reserved or over-long name or id, a payload over the size limit, text that is not valid JSON or
 * not encodable). Nothing of the call was written; repeating it with the same input fails the same
 * way. Each module has its own subtype ({@code InvalidInputException} in the store,
 * {@code InvalidWorkflowInputException} in workflows); catch this type to handle all of them.
 */
public class WaymarkInputException extends WaymarkException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid input described by {@code message}. */
    public WaymarkInputException(String message) {
        super(message);
    }

    /** An invalid input described by {@code message}, found while parsing {@code cause}. */
    public WaymarkInputException(String message, Throwable cause) {
        super(message, cause);
    }
}
