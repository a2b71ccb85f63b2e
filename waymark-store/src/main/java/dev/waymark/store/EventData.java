package dev.waymark.store;

import dev.waymark.store.internal.Json;
import dev.waymark.store.plumbing.Utf16;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * An event to append. The payload and the metadata are JSON text; the store checks that they
 * parse (and that metadata is a JSON object) before any database work, and refuses a string (value
 * or field name) holding a NUL character or a lone UTF-16 surrogate, which PostgreSQL could not store
 * as given, with an {@link InvalidInputException} naming the field. The event type follows the
 * rules of stream names for characters (see {@link StreamNames}): no control characters (NUL
 * included), no lone surrogate, no line separator or bidirectional control, at least one visible
 * character; and it is at most {@value #MAX_TYPE_BYTES} bytes of UTF-8.
 *
 * <p>Limits of data and metadata, checked before any database work and reported as an
 * {@link InvalidInputException} naming the event, the limit and its constant: nesting at most
 * {@value #MAX_JSON_DEPTH} deep, numbers at most {@value #MAX_JSON_NUMBER_LENGTH} characters long
 * written out in plain decimal notation (which also keeps them within PostgreSQL's {@code numeric}
 * range), strings at most {@value #MAX_JSON_STRING_LENGTH} and field names at most
 * {@value #MAX_JSON_NAME_LENGTH} chars. The document as a whole is bounded only by PostgreSQL
 * ({@code jsonb} values below 256 MiB). The store reads stored data with the same limits, so what
 * it accepted it can always read back.
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

    /** The longest event type, in bytes of UTF-8. */
    public static final int MAX_TYPE_BYTES = 256;

    /**
     * The deepest nesting of arrays and objects in data and metadata; the top-level value is at
     * depth 1.
     */
    public static final int MAX_JSON_DEPTH = 1_000;

    /**
     * The longest number in data and metadata, in characters, as written and as PostgreSQL's
     * {@code jsonb} stores it: in plain decimal notation, so {@code 1e999} counts 1,000 characters.
     * This also keeps every number within PostgreSQL's {@code numeric} range.
     */
    public static final int MAX_JSON_NUMBER_LENGTH = 1_000;

    /** The longest string value in data and metadata, in UTF-16 chars after unescaping. */
    public static final int MAX_JSON_STRING_LENGTH = 20_000_000;

    /** The longest field name in data and metadata, in UTF-16 chars after unescaping. */
    public static final int MAX_JSON_NAME_LENGTH = 50_000;

    /** Checks the fields that need no parsing; JSON is checked by the store, with context. */
    public EventData {
        if (type == null || Utf16.isBlank(type)) {
            throw new InvalidInputException("event type must not be null or blank (empty, or made only of whitespace"
                    + " or invisible characters)" + (type == null || type.isEmpty()
                            ? ""
                            : ": '" + Utf16.shown(type, 40)
                                    + "'"));
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
        int breaking = Utf16.lineOrBidiControl(type);
        if (breaking >= 0) {
            throw new InvalidInputException("event type must not contain " + String.format("U+%04X",
                    (int) type.charAt(breaking)) + " (index " + breaking + "), a line separator or bidirectional"
                    + " control that garbles every listing showing the type: '" + Utf16.shown(type, 80) + "'");
        }
        int bytes = type.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_TYPE_BYTES) {
            throw new InvalidInputException("event type is " + bytes + " bytes of UTF-8, more than the limit of "
                    + MAX_TYPE_BYTES + " (EventData.MAX_TYPE_BYTES): '" + Utf16.shown(type, 40) + "'");
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
