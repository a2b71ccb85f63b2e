package dev.waymark.workflow.internal;

/** User-supplied text as messages and listings show it: escaped where it would garble, shortened whole. */
public final class Text {

    private Text() {}

    /**
     * Whether the code point is one an id or a name may not hold: a control character (Unicode Cc,
     * C1 controls such as U+0085 included), a format character (Cf: the bidi controls U+202A–U+202E
     * and U+2066–U+2069, the zero-width characters, U+FEFF), or a line or paragraph separator
     * (U+2028, U+2029). Each is invisible or moves the text around it: printed, it garbles a listing.
     */
    public static boolean garbling(int codePoint) {
        return switch (Character.getType(codePoint)) {
            case Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR -> true;
            default -> false;
        };
    }

    /** The index of the first {@link #garbling} code point of {@code s}, or -1. */
    public static int firstGarbling(String s) {
        for (int i = 0; i < s.length();) {
            int cp = s.codePointAt(i);
            if (garbling(cp)) {
                return i;
            }
            i += Character.charCount(cp);
        }
        return -1;
    }

    /**
     * {@code s} with every {@link #garbling} character and every lone UTF-16 surrogate written as a
     * Java escape (a backslash, 'u' and four lower-case hex digits), so that a message prints it on
     * one line, in order and visibly; null stays "null".
     */
    public static String escape(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1));
            int cp = pair ? s.codePointAt(i) : c;
            boolean escaped = garbling(cp) || (!pair && Character.isSurrogate(c));
            if (escaped && out == null) {
                out = new StringBuilder(s.length() + 16).append(s, 0, i);
            }
            if (out != null) {
                if (escaped) {
                    for (char unit : Character.toChars(cp)) {
                        out.append(String.format("\\u%04x", (int) unit));
                    }
                } else {
                    out.append(Character.toChars(cp));
                }
            }
            if (pair) {
                i++;
            }
        }
        return out == null ? s : out.toString();
    }

    /**
     * {@code s} cut to at most {@code max} UTF-16 units followed by "...", never between the two
     * halves of a surrogate pair (the cut moves one unit earlier instead); {@code s} itself when it
     * fits.
     */
    public static String shorten(String s, int max) {
        if (s.length() <= max) {
            return s;
        }
        int end = max;
        if (end > 0 && Character.isHighSurrogate(s.charAt(end - 1)) && Character.isLowSurrogate(s.charAt(end))) {
            end--;
        }
        return s.substring(0, end) + "...";
    }
}
