package dev.waymark.store.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
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
     * accepts and stores as given, without building a tree: no string (value or field name) may
     * hold a NUL character or a lone UTF-16 surrogate, raw or escaped. A lone surrogate has no
     * UTF-8 form: the driver would send '?' in its place, or the server would refuse the escape.
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
                if (t == JsonToken.VALUE_STRING || t == JsonToken.FIELD_NAME) {
                    checkString(parser, t, what);
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

    private static void checkString(JsonParser parser, JsonToken token, String what) throws IOException {
        String text = parser.getText();
        if (text.indexOf('\u0000') >= 0) {
            throw new InvalidInputException(what + " contains a \\u0000 character, which PostgreSQL jsonb refuses");
        }
        int lone = Utf16.loneSurrogate(text);
        if (lone >= 0) {
            // named by its JSON pointer, not quoted: the text may be long, and cannot be printed as it is
            String where = token == JsonToken.FIELD_NAME
                    ? "a field name of the object at " + pointer(parser.getParsingContext().getParent())
                    : "the string at " + pointer(parser.getParsingContext());
            throw new InvalidInputException(what + " contains a lone UTF-16 surrogate (\\u"
                    + Integer.toHexString(text.charAt(lone)) + ", which has no UTF-8 form) in " + where);
        }
    }

    private static String pointer(JsonStreamContext context) {
        String pointer = context == null ? "" : context.pathAsPointer().toString();
        return pointer.isEmpty() ? "the top level" : "'" + pointer + "'";
    }

    private static String describe(JsonNode node) {
        return node == null ? "nothing" : node.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }
}
