package dev.waymark.store;

import java.io.Serial;
import java.util.Optional;
import java.util.UUID;

/**
 * An event id of the append is already stored. Nothing of the append was written. A caller that
 * retries an append with the same ids treats this as success: the earlier attempt committed.
 *
 * <p>Also raised, in place of an {@link AppendConflictException} (then its cause), when an
 * append's expected version fails and every event of the append is already stored in the stream
 * it was sent to: the append is a resend of one that committed, so {@code noStream()} and
 * {@code exactly(n)} retries are as idempotent as {@code any()} ones. {@link #eventId()} is then
 * the append's first event id.
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
