package dev.waymark.workflow.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.waymark.store.plumbing.Utf16;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * JSON text in the form {@code jsonb} gives back, so that a value decoded on the run that journals
 * it is the value every replay decodes: {@code jsonb} orders object keys by their UTF-8 length, then
 * bytewise; keeps the last of duplicate keys; writes numbers without an exponent
 * ({@code 1E+7} is {@code 10000000}, {@code 2.50} stays {@code 2.50}); and cannot hold a NUL or a
 * lone UTF-16 surrogate (it refuses the first and stores the second as {@code ?}), which are refused
 * here with the value named.
 */
final class JsonbText {

    private static final ObjectReader JSON = WorkflowJson.MAPPER.reader()
            .with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .without(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES); // jsonb keeps 2.50 as 2.50

    private JsonbText() {}

    /**
     * The {@code jsonb} form of {@code json}; {@code what} names the value in errors.
     *
     * @throws InvalidWorkflowInputException if the text is not JSON, or holds a NUL or a lone surrogate
     */
    static String of(String json, String what) {
        if (isPlain(json)) {
            return json; // an integer, true, false, null or a string without escapes: jsonb keeps it as written
        }
        JsonNode tree;
        try {
            tree = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new InvalidWorkflowInputException(what + " is not JSON: " + e.getOriginalMessage(), e);
        }
        if (tree == null || tree.isMissingNode()) {
            throw new InvalidWorkflowInputException(what + " is empty, not JSON");
        }
        StringBuilder out = new StringBuilder(json.length());
        write(tree, out, what);
        return out.toString();
    }

    /** Text that needs no rewriting: an integer without exponent, a literal, or a string with no escape or surrogate. */
    private static boolean isPlain(String json) {
        int n = json.length();
        if (n == 0) {
            return false;
        }
        char first = json.charAt(0);
        if (first == '"') {
            if (n < 2 || json.charAt(n - 1) != '"') {
                return false;
            }
            for (int i = 1; i < n - 1; i++) {
                char c = json.charAt(i);
                if (c == '\\' || c == '"' || c < 0x20 || Character.isSurrogate(c)) {
                    return false;
                }
            }
            return true;
        }
        if (json.equals("true") || json.equals("false") || json.equals("null")) {
            return true;
        }
        int start = first == '-' ? 1 : 0;
        if (start == n || (json.charAt(start) == '0' && n > start + 1)) {
            return false;
        }
        for (int i = start; i < n; i++) {
            char c = json.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return !json.equals("-0");
    }

    private static void write(JsonNode node, StringBuilder out, String what) {
        switch (node.getNodeType()) {
            case OBJECT -> {
                List<Map.Entry<String, JsonNode>> fields = new ArrayList<>(node.properties());
                fields.sort((a, b) -> compareKeys(a.getKey(), b.getKey()));
                out.append('{');
                for (int i = 0; i < fields.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    string(fields.get(i).getKey(), out, what);
                    out.append(':');
                    write(fields.get(i).getValue(), out, what);
                }
                out.append('}');
            }
            case ARRAY -> {
                out.append('[');
                for (int i = 0; i < node.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    write(node.get(i), out, what);
                }
                out.append(']');
            }
            case STRING -> string(node.textValue(), out, what);
            case NUMBER -> out.append(node.isIntegralNumber()
                    ? node.bigIntegerValue().toString()
                    : node.decimalValue().toPlainString());
            default -> out.append(node); // true, false, null
        }
    }

    private static void string(String s, StringBuilder out, String what) {
        if (s.indexOf('\u0000') >= 0) {
            throw new InvalidWorkflowInputException(
                    what + " holds a NUL character (\\u0000), which jsonb cannot store");
        }
        int at = Utf16.loneSurrogate(s);
        if (at >= 0) {
            throw new InvalidWorkflowInputException(what + " holds a lone UTF-16 surrogate (\\u"
                    + Integer.toHexString(s.charAt(at)) + "), which has no UTF-8 form");
        }
        out.append('"').append(JsonStringEncoder.getInstance().quoteAsString(s)).append('"');
    }

    /** jsonb's key order: shorter UTF-8 first, then bytewise (unsigned). */
    private static int compareKeys(String a, String b) {
        byte[] x = a.getBytes(StandardCharsets.UTF_8);
        byte[] y = b.getBytes(StandardCharsets.UTF_8);
        if (x.length != y.length) {
            return Integer.compare(x.length, y.length);
        }
        return Arrays.compareUnsigned(x, y);
    }
}
