package dev.waymark.store;

import dev.waymark.store.internal.Json;
import dev.waymark.store.internal.Utf16;
import java.util.UUID;

/**
 * An event to append. The payload and the metadata are JSON text; the store checks that they
 * parse (and that metadata is a JSON object) before any database work, and refuses a string (value
 * or field name) holding a NUL character or a lone UTF-16 surrogate, which PostgreSQL could not store
 * as given, with an {@link InvalidInputException} naming the field. The event type follows the
 * rules of stream names for characters: no control characters (NUL included) and no lone surrogate.
 *
 * <p>{@code eventId} is optional: without one the store generates a time-ordered UUIDv7. Supply
 * your own id to make a retry idempotent: appending an id that is already stored raises
 * {@link DuplicateEventException}, which a retrying caller treats as success.
 *
 * @param eventId the event's id, or {@code null} to let the store generate one
 * @param type the event type, non-blank
 * @param data the payload, a JSON document
 * @param metadata a JSON object, or {@code null}
 * @param causationId the id of the event or command that caused this one, or {@code null}
 * @param correlationId the id of the conversation or workflow this event belongs to, or {@code null}
 */
public record EventData(
        UUID eventId, String type, String data, String metadata, UUID causationId, UUID correlationId) {

    /** stub */
    public static final int MAX_TYPE_BYTES = 256;
    /** stub */
    public static final int MAX_JSON_DEPTH = 1000;
    /** stub */
    public static final int MAX_JSON_NUMBER_LENGTH = 1000;
    /** stub */
    public static final int MAX_JSON_STRING_LENGTH = 20_000_000;

    /** Checks the fields that need no parsing; JSON is checked by the store, with context. */
    public EventData {
        if (type == null || type.isBlank()) {
            throw new InvalidInputException("event type must not be null or blank");
        }
        for (int i = 0; i < type.length(); i++) {
            if (Character.isISOControl(type.charAt(i))) {
                throw new InvalidInputException("event type must not contain control characters (index " + i + ")");
            }
        }
        int lone = Utf16.loneSurrogate(type);
        if (lone >= 0) {
            throw new InvalidInputException("event type must not contain a lone UTF-16 surrogate (index " + lone
                    + "): it has no UTF-8 form");
        }
        if (data == null) {
            throw new InvalidInputException("event data must not be null (type " + type + ")");
        }
    }

    /** An event whose payload is the given JSON text. */
    public static EventData json(String type, String json) {
        return new EventData(null, type, json, null, null, null);
    }

    /**
     * An event whose payload is {@code payload} serialized with Jackson's default settings.
     *
     * @throws InvalidInputException if {@code payload} is null (for an empty payload pass an empty
     *     map, or {@code json(type, "{}")}) or {@code type} is invalid
     */
    public static EventData of(String type, Object payload) {
        if (payload == null) {
            throw new InvalidInputException("event payload must not be null (type " + type
                    + "): for an event without data use EventData.json(type, \"{}\")");
        }
        return json(type, Json.write(payload));
    }

    /** This event with the given id (for idempotent retries). */
    public EventData withId(UUID id) {
        return new EventData(id, type, data, metadata, causationId, correlationId);
    }

    /** This event with the given metadata, a JSON object. */
    public EventData withMetadata(String metadataJson) {
        return new EventData(eventId, type, data, metadataJson, causationId, correlationId);
    }

    /** This event with the given causation id. */
    public EventData withCausationId(UUID id) {
        return new EventData(eventId, type, data, metadata, id, correlationId);
    }

    /** This event with the given correlation id. */
    public EventData withCorrelationId(UUID id) {
        return new EventData(eventId, type, data, metadata, causationId, id);
    }

    /**
     * This event with W3C trace context merged into its metadata ({@code traceparent} and, when
     * not null, {@code tracestate}), replacing any trace context already there.
     *
     * @throws InvalidInputException if {@code traceparent} is not a W3C traceparent or the
     *     metadata is not a JSON object
     */
    public EventData withTraceContext(String traceparent, String tracestate) {
        return withMetadata(TraceContext.inject(metadata, traceparent, tracestate));
    }
}
