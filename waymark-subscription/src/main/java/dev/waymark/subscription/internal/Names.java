package dev.waymark.subscription.internal;

import dev.waymark.store.InvalidInputException;

/**
 * Checks of the names a caller gives (subscriptions, workers): no control or invisible character
 * (a NUL, which PostgreSQL text cannot hold; a line break or separator, which garbles listings; a
 * bidirectional or zero-width format character; a lone surrogate, which has no UTF-8 form).
 */
public final class Names {

    private Names() {}

    /**
     * What is wrong with {@code name} ("U+0000 at index 3"), or null when it holds no character
     * of the kinds above.
     */
    public static String invisible(String name) {
        for (int i = 0; i < name.length();) {
            int cp = name.codePointAt(i);
            if (refused(cp)) {
                return String.format("U+%04X at index %d", cp, i);
            }
            i += Character.charCount(cp);
        }
        return null;
    }

    /** {@code name} with each refused character written as {@code \\uXXXX}, for messages. */
    public static String printable(String name) {
        StringBuilder out = new StringBuilder(name.length() + 8);
        for (int i = 0; i < name.length();) {
            int cp = name.codePointAt(i);
            if (refused(cp)) {
                out.append(String.format("\\u%04X", cp));
            } else {
                out.appendCodePoint(cp);
            }
            i += Character.charCount(cp);
        }
        return out.toString();
    }

    /**
     * Refuses {@code value} (a name given to a call; null passes, for the caller to judge) when it
     * holds a control or invisible character, before the database is touched.
     *
     * @throws InvalidInputException naming what, the value (printable) and the character
     */
    public static void requireArgument(String what, String value) {
        String invisible = value == null ? null : invisible(value);
        if (invisible != null) {
            throw new InvalidInputException(what + " must not hold control or invisible characters, got '"
                    + printable(value) + "' (" + invisible + ")");
        }
    }

    private static boolean refused(int cp) {
        return switch (Character.getType(cp)) {
            case Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
                    Character.SURROGATE ->
                true;
            default -> false;
        };
    }
}
