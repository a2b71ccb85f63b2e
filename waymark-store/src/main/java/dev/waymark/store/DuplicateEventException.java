package dev.waymark.store;

import java.io.Serial;
import java.util.Optional;
import java.util.UUID;

/**
 * An event id of the append is already stored. Nothing of the append was written. A caller that
 * retries an append with the same ids treats this as success: the earlier attempt committed.
 */
public final class DuplicateEventException extends StoreException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String eventId;

    /** The id {@code eventId} (null when the database did not name it) is already stored. */
    public DuplicateEventException(String message, UUID eventId, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
        this.eventId = eventId == null ? null : eventId.toString();
    }

    /** The duplicate id, when known. */
    public Optional<UUID> eventId() {
        return Optional.ofNullable(eventId).map(UUID::fromString);
    }
}
