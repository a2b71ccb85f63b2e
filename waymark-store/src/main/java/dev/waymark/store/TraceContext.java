package dev.waymark.store;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.waymark.store.internal.Json;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * W3C trace context carried in event metadata as {@code {"traceparent": "...", "tracestate": "..."}}.
 * Injecting merges into the existing metadata object; extracting never throws.
 */
public final class TraceContext {

    private static final Pattern TRACEPARENT = Pattern.compile("^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$");

    private TraceContext() {}

    /**
     * Returns {@code metadata} (a JSON object, or null for {@code {}}) with {@code traceparent} and,
     * when not null, {@code tracestate} set, replacing earlier values.
     *
     * @throws InvalidInputException if the traceparent is malformed or the metadata is not an object
     */
    public static String inject(String metadata, String traceparent, String tracestate) {
        if (traceparent == null || !TRACEPARENT.matcher(traceparent).matches()) {
            throw new InvalidInputException("not a W3C traceparent: '" + traceparent + "'");
        }
        ObjectNode node = metadata == null ? Json.MAPPER.createObjectNode() : Json.readObject(metadata, "metadata");
        node.put("traceparent", traceparent);
        node.remove("tracestate");
        if (tracestate != null) {
            node.put("tracestate", tracestate);
        }
        return node.toString();
    }

    /** The valid {@code traceparent} of {@code metadata}, or empty (absent, invalid, not JSON). */
    public static Optional<String> traceparent(String metadata) {
        return field(metadata, "traceparent").filter(t -> TRACEPARENT.matcher(t).matches());
    }

    /** The {@code tracestate} of {@code metadata}, or empty. */
    public static Optional<String> tracestate(String metadata) {
        return field(metadata, "tracestate");
    }

    private static Optional<String> field(String metadata, String name) {
        if (metadata == null) {
            return Optional.empty();
        }
        try {
            var value = Json.MAPPER.readTree(metadata).get(name);
            return value != null && value.isTextual() ? Optional.of(value.asText()) : Optional.empty();
        } catch (Exception e) {
            return Optional.empty();
        }
    }
}
