package dev.waymark.store;

import dev.waymark.store.internal.Json;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

/**
 * An event as stored.
 *
 * @param eventId the event's id
 * @param streamName the stream the event was appended to
 * @param streamVersion the event's version in its stream, from 1
 * @param position the event's place in the global order
 * @param type the event type
 * @param data the payload, JSON text
 * @param metadata the metadata, a JSON object as text, or {@code null}
 * @param causationId the causation id, or {@code null}
 * @param correlationId the correlation id, or {@code null}
 * @param createdAt when the append was made (the store's clock)
 */
public record RecordedEvent(
        UUID eventId,
        String streamName,
        long streamVersion,
        GlobalPosition position,
        String type,
        String data,
        String metadata,
        UUID causationId,
        UUID correlationId,
        Instant createdAt) {

    /** The stream's category: the part of the name before the first {@code '-'}. */
    public String category() {
        return StreamNames.category(streamName);
    }

    /** The payload deserialized with Jackson's default settings. */
    public <T> T dataAs(Class<T> type) {
        return Json.read(data, type);
    }

    /** The W3C {@code traceparent} carried in the metadata, if present and valid. */
    public Optional<String> traceparent() {
        return TraceContext.traceparent(metadata);
    }
}
