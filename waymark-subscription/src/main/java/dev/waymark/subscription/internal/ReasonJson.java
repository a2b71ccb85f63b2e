package dev.waymark.subscription.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.plumbing.Utf16;
import java.util.Map;

/**
 * The JSON form of a {@link DeadLetterReason}, with a mapper nobody else can reconfigure. Every
 * string in it is {@link Utf16#storable storable}: a NUL (which no jsonb value may hold) or a lone
 * surrogate becomes U+FFFD, so that a handler's odd text can never keep its letter from being recorded.
 */
public final class ReasonJson {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private ReasonJson() {}

    /** The reason as a JSON object: its kind, summary and details. */
    public static String of(DeadLetterReason reason) {
        ObjectNode node = MAPPER.createObjectNode().put("kind", reason.kind())
                .put("summary", Utf16.storable(reason.summary()));
        switch (reason) {
            case DeadLetterReason.Poison p -> node.put("detail", Utf16.storable(p.detail()));
            case DeadLetterReason.Invalid i -> node.put("detail", Utf16.storable(i.detail()));
            case DeadLetterReason.MaxAttempts m -> node.put("attempts", m.attempts());
            case DeadLetterReason.Other o -> {
                if (o.detail() != null) {
                    try {
                        node.set("detail", storable(MAPPER.readTree(o.detail())));
                    } catch (JsonProcessingException e) {
                        node.put("detail", Utf16.storable(o.detail())); // not JSON: kept as text
                    }
                }
            }
        }
        return node.toString();
    }

    /** The summary as stored in its text column. */
    public static String summary(DeadLetterReason reason) {
        return Utf16.storable(reason.summary());
    }

    private static JsonNode storable(JsonNode node) {
        if (node.isTextual()) {
            return MAPPER.getNodeFactory().textNode(Utf16.storable(node.textValue()));
        }
        if (node.isArray()) {
            ArrayNode out = MAPPER.createArrayNode();
            node.forEach(element -> out.add(storable(element)));
            return out;
        }
        if (node.isObject()) {
            ObjectNode out = MAPPER.createObjectNode();
            for (Map.Entry<String, JsonNode> field : node.properties()) {
                out.set(Utf16.storable(field.getKey()), storable(field.getValue()));
            }
            return out;
        }
        return node;
    }
}
