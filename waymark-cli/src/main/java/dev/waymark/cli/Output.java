package dev.waymark.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializable;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import java.io.IOException;

/**
 * How values are printed. Text tables keep one line per row: {@link #cell} escapes what would break
 * a row. {@code --json} carries the exact values, with stored JSON nested ({@link StoredJson}).
 */
final class Output {

    private Output() {}

    /**
     * {@code value} for one cell of a text table or one line of text: newlines, carriage returns and
     * tabs as {@code \n}, {@code \r}, {@code \t}; other control characters, line and paragraph
     * separators and invisible format characters (bidirectional overrides, zero-width spaces) as
     * {@code \}{@code uXXXX}. Anything else, backslashes included, is printed as is.
     */
    static String cell(Object value) {
        String text = String.valueOf(value);
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            String escaped = switch (c) {
                case '\n' -> "\\n";
                case '\r' -> "\\r";
                case '\t' -> "\\t";
                default -> breaksALine(c) ? String.format("\\u%04x", (int) c) : null;
            };
            if (escaped != null && out == null) {
                out = new StringBuilder(text.length() + 8).append(text, 0, i);
            }
            if (out != null) {
                if (escaped != null) {
                    out.append(escaped);
                } else {
                    out.append(c);
                }
            }
        }
        return out == null ? text : out.toString();
    }

    private static boolean breaksALine(char c) {
        return switch (Character.getType(c)) {
            case Character.CONTROL, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR, Character.FORMAT -> true;
            default -> false;
        };
    }

    /**
     * {@link String#format} with every argument but numbers passed through {@link #cell} (so a
     * format may use {@code %s} and {@code %d}, not {@code %b}).
     */
    static String row(String format, Object... args) {
        Object[] cells = new Object[args.length];
        for (int i = 0; i < args.length; i++) {
            cells[i] = args[i] == null || args[i] instanceof Number ? args[i] : cell(args[i]);
        }
        return String.format(format, cells);
    }

    /**
     * Stored JSON (a jsonb value as PostgreSQL prints it): nested as is in {@code --json} output, so
     * numbers, key order and long strings come out exactly as stored; its text in text output.
     *
     * @param json the stored JSON text
     */
    record StoredJson(String json) implements JsonSerializable {

        /** {@code json} wrapped, or null for null (printed as JSON {@code null}). */
        static StoredJson of(String json) {
            return json == null ? null : new StoredJson(json);
        }

        @Override
        public void serialize(JsonGenerator gen, SerializerProvider serializers) throws IOException {
            gen.writeRawValue(json);
        }

        @Override
        public void serializeWithType(JsonGenerator gen, SerializerProvider serializers, TypeSerializer typeSer)
                throws IOException {
            serialize(gen, serializers);
        }

        @Override
        public String toString() {
            return json;
        }
    }
}
