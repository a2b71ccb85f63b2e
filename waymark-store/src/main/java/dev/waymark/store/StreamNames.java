package dev.waymark.store;

import dev.waymark.store.plumbing.Utf16;
import java.nio.charset.StandardCharsets;

/**
 * The rules for stream names, shared by the store, its SQL and its users.
 *
 * <ul>
 *   <li>A name is 1 to {@value #MAX_BYTES} bytes of UTF-8, with no control characters, no lone
 *       UTF-16 surrogate, no line or paragraph separator (U+2028, U+2029) and no bidirectional
 *       embedding, override or isolate (U+202A-U+202E, U+2066-U+2069), and with at least one
 *       visible character: a name made only of whitespace or invisible characters (U+200B, U+FEFF,
 *       U+00A0, direction marks, ...) is refused, as a blank event type is.
 *   <li>Names starting with {@value #RESERVED_PREFIX} are reserved for Waymark's own streams.
 *   <li>The category is the part before the first {@code '-'}, or the whole name without one. It
 *       must not be empty or invisible (a name such as {@code -abc} is refused): a category read
 *       must be able to find every stream.
 *   <li>{@link #hash(String)} is a stable 32-bit FNV-1a over the UTF-8 bytes; the SQL function
 *       {@code stream_hash} computes the same value, so a consumer-group member
 *       {@code floorMod(hash, size)} is the same in Java and in the database.
 * </ul>
 */
public final class StreamNames {

    /** The largest stream name, in UTF-8 bytes. */
    public static final int MAX_BYTES = 512;

    /** Names with this prefix belong to Waymark itself and are refused by the public append API. */
    public static final String RESERVED_PREFIX = "$";

    private StreamNames() {}

    /**
     * Checks a stream name supplied by a user.
     *
     * @return the name
     * @throws InvalidInputException naming the rule the name breaks
     */
    public static String requireValid(String name) {
        requireWellFormed(name);
        if (name.startsWith(RESERVED_PREFIX)) {
            throw new InvalidInputException("stream name '" + name + "' is reserved: names starting with '"
                    + RESERVED_PREFIX + "' belong to Waymark");
        }
        return name;
    }

    /**
     * Checks the length and characters of a name, allowing the reserved prefix (for Waymark's
     * own modules).
     *
     * @return the name
     * @throws InvalidInputException naming the rule the name breaks
     */
    public static String requireWellFormed(String name) {
        if (name == null) {
            throw new InvalidInputException("stream name must not be null");
        }
        if (name.isEmpty()) {
            throw new InvalidInputException("stream name must not be empty");
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_BYTES) {
            throw new InvalidInputException("stream name is " + bytes + " bytes of UTF-8, more than the limit of "
                    + MAX_BYTES + ": '" + Utf16.shown(name, 40) + "'");
        }
        if (Utf16.isBlank(name)) {
            throw new InvalidInputException("stream name '" + Utf16.shown(name, 40) + "' is made only of whitespace"
                    + " or invisible characters: a name needs at least one visible character");
        }
        for (int i = 0; i < name.length(); i++) {
            if (Character.isISOControl(name.charAt(i))) {
                throw new InvalidInputException("stream name must not contain control characters (index " + i + "): '"
                        + Utf16.shown(name, 80) + "'");
            }
        }
        int lone = Utf16.loneSurrogate(name);
        if (lone >= 0) {
            // the driver would send '?' for it, and the name would silently become another stream's
            throw new InvalidInputException("stream name must not contain a lone UTF-16 surrogate (index " + lone
                    + "): it has no UTF-8 form");
        }
        int breaking = Utf16.lineOrBidiControl(name);
        if (breaking >= 0) {
            throw new InvalidInputException("stream name must not contain " + codePoint(name.charAt(breaking))
                    + " (index " + breaking + "), a line separator or bidirectional control that garbles every"
                    + " listing showing the name: '" + Utf16.shown(name, 80) + "'");
        }
        String category = category(name);
        if (category.isEmpty()) {
            throw new InvalidInputException("stream name '" + Utf16.shown(name, 80) + "' has an empty category (the"
                    + " part before the first '-'), so no category read could find it: start the name with a"
                    + " category, as in 'order" + Utf16.shown(name, 40) + "'");
        }
        if (Utf16.isBlank(category)) {
            throw new InvalidInputException("stream name '" + Utf16.shown(name, 80) + "' has a category made only of"
                    + " whitespace or invisible characters ('" + Utf16.shown(category, 40) + "'): start the name"
                    + " with a visible category");
        }
        return name;
    }

    private static String codePoint(char c) {
        return String.format("U+%04X", (int) c);
    }

    /** The category of a stream: the part of its name before the first {@code '-'}. */
    public static String category(String name) {
        int dash = name.indexOf('-');
        return dash < 0 ? name : name.substring(0, dash);
    }

    /** A stable 32-bit FNV-1a hash of the UTF-8 bytes of {@code name}, equal to SQL {@code stream_hash}. */
    public static int hash(String name) {
        int h = 0x811c9dc5;
        for (byte b : name.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 16777619;
        }
        return h;
    }

    /**
     * The consumer-group member that owns {@code name} in a group of {@code size}: {@code floorMod(hash, size)}.
     *
     * @throws InvalidInputException if {@code size} is below 1 (as {@link Partition} does)
     */
    public static int member(String name, int size) {
        if (size < 1) {
            throw new InvalidInputException("consumer group size must be >= 1, got " + size);
        }
        return Math.floorMod(hash(name), size);
    }
}
