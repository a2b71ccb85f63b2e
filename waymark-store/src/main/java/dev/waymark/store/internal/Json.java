package dev.waymark.store.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.StoreException;
import java.io.IOException;

/** The store's one Jackson mapper and its JSON checks. Internal: not for users. */
public final class Json {

    /** Jackson with default settings; safe to share. */
    public static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {}

    /** Serializes {@code value}. */
    public static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new InvalidInputException("cannot serialize " + value.getClass().getName() + " to JSON: "
                    + e.getOriginalMessage(), e);
        }
    }

    /** Deserializes {@code json} into {@code type}. */
    public static <T> T read(String json, Class<T> type) {
        try {
            return MAPPER.readValue(json, type);
        } catch (JsonProcessingException e) {
            throw new StoreException("cannot read event data as " + type.getName() + ": " + e.getOriginalMessage(),
                    null, e);
        }
    }

    /** Parses a JSON object, or throws naming {@code what}. */
    public static ObjectNode readObject(String json, String what) {
        JsonNode node;
        try {
            node = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new InvalidInputException(what + " is not valid JSON: " + e.getOriginalMessage(), e);
        }
        if (!(node instanceof ObjectNode object)) {
            throw new InvalidInputException(what + " must be a JSON object, got " + describe(node));
        }
        return object;
    }

    /**
     * Checks that {@code json} is one well-formed JSON value that PostgreSQL's {@code jsonb}
     * accepts (no NUL characters), without building a tree.
     *
     * @return the first token of the value
     * @throws InvalidInputException naming {@code what}
     */
    public static JsonToken check(String json, String what) {
        try (JsonParser parser = MAPPER.getFactory().createParser(json)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                throw new InvalidInputException(what + " is not valid JSON: it is empty");
            }
            int depth = 0;
            for (JsonToken t = first; ; t = parser.nextToken()) {
                if ((t == JsonToken.VALUE_STRING || t == JsonToken.FIELD_NAME) && parser.getText().indexOf('\u0000') >= 0) {
                    throw new InvalidInputException(
                            what + " contains a \\u0000 character, which PostgreSQL jsonb refuses");
                }
                if (t.isStructStart()) {
                    depth++;
                } else if (t.isStructEnd()) {
                    depth--;
                }
                if (depth == 0) {
                    break;
                }
            }
            if (parser.nextToken() != null) {
                throw new InvalidInputException(what + " is not valid JSON: trailing content after the value");
            }
            return first;
        } catch (JsonProcessingException e) {
            throw new InvalidInputException(what + " is not valid JSON: " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new InvalidInputException(what + " could not be read as JSON: " + e.getMessage(), e);
        }
    }

    private static String describe(JsonNode node) {
        return node == null ? "nothing" : node.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }
}
