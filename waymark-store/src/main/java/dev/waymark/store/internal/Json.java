package dev.waymark.store.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.waymark.store.EventData;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.StoreException;
import dev.waymark.store.plumbing.Utf16;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The store's one Jackson mapper and its JSON checks. Internal: not for users. */
public final class Json {

    /**
     * The read limits of event data and metadata, set here deliberately from the constants of
     * {@link EventData} (they equal Jackson's defaults, which also apply where a mapper of the
     * application's reads stored data).
     */
    static final StreamReadConstraints READ_LIMITS = StreamReadConstraints.builder()
            .maxNestingDepth(EventData.MAX_JSON_DEPTH)
            .maxNumberLength(EventData.MAX_JSON_NUMBER_LENGTH)
            .maxStringLength(EventData.MAX_JSON_STRING_LENGTH)
            .maxNameLength(EventData.MAX_JSON_NAME_LENGTH)
            .build();

    /** Jackson with default settings and the read limits of {@link #READ_LIMITS}; safe to share. */
    public static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(READ_LIMITS).build());

    /** A limit hit as Jackson words it: "... (actual) exceeds the maximum allowed (limit, from `...getMaxXxx()`)". */
    private static final Pattern LIMIT = Pattern.compile(
            "\\((\\d+)\\) exceeds the maximum allowed \\((\\d+), from `StreamReadConstraints\\.getMax(\\w+)\\(\\)`");

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
        } catch (StreamConstraintsException e) {
            throw beyondLimit(what, e);
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
            for (JsonToken t = first;; t = parser.nextToken()) {
                if (t == JsonToken.VALUE_STRING || t == JsonToken.FIELD_NAME) {
                    checkString(parser, t, what);
                } else if (t == JsonToken.VALUE_NUMBER_FLOAT) {
                    checkNumber(parser, what);
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
        } catch (StreamConstraintsException e) {
            throw beyondLimit(what, e);
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

    /**
     * Refuses a number whose plain decimal form (how {@code jsonb} stores and returns it: {@code 1e3}
     * becomes {@code 1000}) is longer than {@link EventData#MAX_JSON_NUMBER_LENGTH}. Jackson's own
     * limit counts the number as written, so {@code 1e200000} would pass it, and then overflow
     * PostgreSQL's {@code numeric}, or come back from the database longer than any reader accepts.
     * Only a number with an exponent can be longer written out than as written.
     */
    private static void checkNumber(JsonParser parser, String what) throws IOException {
        String text = parser.getText();
        if (text.indexOf('e') < 0 && text.indexOf('E') < 0) {
            return;
        }
        long length;
        boolean overflows;
        try {
            BigDecimal d = new BigDecimal(text);
            length = plainLength(d);
            // numeric holds up to 131072 digits before the decimal point and 16383 after it
            overflows = (long) d.precision() - d.scale() > 131_072 || d.scale() > 16_383;
        } catch (NumberFormatException | ArithmeticException e) { // an exponent beyond int range
            length = Long.MAX_VALUE;
            overflows = true;
        }
        if (length > EventData.MAX_JSON_NUMBER_LENGTH) {
            throw new InvalidInputException(what + " holds the number " + Utf16.shorten(text, 40) + " at "
                    + pointer(parser.getParsingContext()) + ", which PostgreSQL stores in plain decimal notation as "
                    + (length == Long.MAX_VALUE ? "more than 2^31" : Long.toString(length)) + " characters, more than"
                    + " the limit of " + EventData.MAX_JSON_NUMBER_LENGTH + " (EventData.MAX_JSON_NUMBER_LENGTH)"
                    + (overflows ? "; it is also beyond the range of PostgreSQL's numeric" : ""));
        }
    }

    /** The length of {@code d} in plain decimal notation, as PostgreSQL's numeric output writes it. */
    private static long plainLength(BigDecimal d) {
        long scale = d.scale();
        if (d.signum() == 0) {
            return scale > 0 ? scale + 2 : 1; // "0.000" or "0"
        }
        long precision = d.precision();
        long digits = scale <= 0 ? precision - scale : precision > scale ? precision + 1 : scale + 2;
        return digits + (d.signum() < 0 ? 1 : 0);
    }

    /** A read limit hit, reported as the limit it is (not as invalid JSON), naming its constant. */
    private static InvalidInputException beyondLimit(String what, StreamConstraintsException e) {
        Matcher m = LIMIT.matcher(e.getOriginalMessage());
        if (!m.find()) {
            return new InvalidInputException(what + " is beyond a JSON limit of the store: " + e.getOriginalMessage(),
                    e);
        }
        String limit = switch (m.group(3)) {
            case "NestingDepth" -> "nesting depth %s, more than the limit of %s (EventData.MAX_JSON_DEPTH)";
            case "NumberLength" -> "a number of %s characters, more than the limit of %s"
                    + " (EventData.MAX_JSON_NUMBER_LENGTH)";
            case "StringLength" -> "a string of %s chars, more than the limit of %s (EventData.MAX_JSON_STRING_LENGTH)";
            case "NameLength" -> "a field name of %s chars, more than the limit of %s (EventData.MAX_JSON_NAME_LENGTH)";
            default -> "%s, more than the limit of %s (StreamReadConstraints.getMax" + m.group(3) + ")";
        };
        return new InvalidInputException(what + " is beyond a JSON limit of the store: "
                + limit.formatted(m.group(1), m.group(2)), e);
    }

    private static String pointer(JsonStreamContext context) {
        String pointer = context == null ? "" : context.pathAsPointer().toString();
        return pointer.isEmpty() ? "the top level" : "'" + pointer + "'";
    }

    private static String describe(JsonNode node) {
        return node == null ? "nothing" : node.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }
}
