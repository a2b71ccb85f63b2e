package dev.waymark.store.plumbing;

/** UTF-16 checks of text the store sends to PostgreSQL as UTF-8. */
public final class Utf16 {

    private Utf16() {}

    /**
     * The index of the first lone surrogate in {@code text} (half of a pair, say a truncated
     * emoji), or -1. Such a char has no UTF-8 form: the driver sends '?' instead, so the stored
     * text silently differs from the given one.
     */
    public static int loneSurrogate(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!Character.isSurrogate(c)) {
                continue;
            }
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else {
                return i;
            }
        }
        return -1;
    }

    /**
     * {@code text} as PostgreSQL can store it, in a text or a jsonb value: each NUL and each lone
     * surrogate replaced by U+FFFD (the same string when there is none; null stays null). For text
     * the library records on the caller's behalf (a reason, an error), where refusing it would lose
     * the record.
     */
    public static String storable(String text) {
        if (text == null || (text.indexOf(0) < 0 && loneSurrogate(text) < 0)) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(++i));
            } else {
                out.append(c == 0 || Character.isSurrogate(c) ? '\uFFFD' : c);
            }
        }
        return out.toString();
    }

    /**
     * {@code text} cut to at most {@code maxChars} chars, with "..." appended when it was cut; never
     * cut between the two halves of a surrogate pair (the cut then keeps one char less).
     */
    public static String shorten(String text, int maxChars) {
        if (text == null || text.length() <= maxChars) {
            return text;
        }
        int end = maxChars;
        if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1)) && Character.isLowSurrogate(text.charAt(end))) {
            end--;
        }
        return text.substring(0, end) + "...";
    }

    /**
     * {@code text} for an error message: at most {@code maxChars} chars (see {@link #shorten}), with
     * each control, line-breaking, bidirectional or otherwise invisible character (see
     * {@link #isInvisible(int)}) other than a plain space written as a backslash-u escape (&#92;uXXXX), and each lone
     * surrogate too, so a message never hides, reorders or garbles what it quotes.
     */
    public static String shown(String text, int maxChars) {
        String cut = shorten(text, maxChars);
        if (cut == null) {
            return null;
        }
        StringBuilder out = new StringBuilder(cut.length());
        for (int i = 0; i < cut.length();) {
            int cp = cut.codePointAt(i);
            if (cp != ' ' && (isInvisible(cp) || Character.getType(cp) == Character.SURROGATE)) {
                for (char c : Character.toChars(cp)) {
                    out.append(String.format("\\u%04X", (int) c));
                }
            } else {
                out.appendCodePoint(cp);
            }
            i += Character.charCount(cp);
        }
        return out.toString();
    }

    /**
     * Whether the code point shows nothing by itself: whitespace and space separators (U+0020,
     * U+00A0, U+3000, ...), line and paragraph separators (U+2028, U+2029), control characters,
     * format characters (zero-width spaces and joiners such as U+200B, U+2060 and U+FEFF, direction
     * marks and bidirectional controls, the soft hyphen, tag characters), and the other
     * default-ignorable or blank-looking ones: combining grapheme joiner U+034F, Hangul fillers
     * U+115F, U+1160, U+3164, U+FFA0, Khmer vowels U+17B4, U+17B5, Mongolian selectors
     * U+180B-U+180F, variation selectors, and the blank Braille pattern U+2800.
     */
    public static boolean isInvisible(int cp) {
        if (Character.isWhitespace(cp) || Character.isSpaceChar(cp)) {
            return true;
        }
        int type = Character.getType(cp);
        if (type == Character.CONTROL || type == Character.FORMAT) {
            return true;
        }
        return cp == 0x034F || cp == 0x115F || cp == 0x1160 || cp == 0x17B4 || cp == 0x17B5
                || (cp >= 0x180B && cp <= 0x180F) || cp == 0x2800 || cp == 0x3164 || cp == 0xFFA0
                || (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xE0100 && cp <= 0xE01EF);
    }

    /** Whether {@code text} is empty or every code point of it is {@link #isInvisible(int) invisible}. */
    public static boolean isBlank(String text) {
        return text.codePoints().allMatch(Utf16::isInvisible);
    }

    /**
     * The index of the first character of {@code text} that breaks a line or reorders the text
     * shown after it (U+2028 line separator, U+2029 paragraph separator, the bidirectional
     * embeddings, overrides and isolates U+202A-U+202E and U+2066-U+2069), or -1. Names holding one
     * garble every listing and log line that prints them. (Direction marks U+200E, U+200F and
     * U+061C, which affect only the neutral characters next to them, are allowed.)
     */
    public static int lineOrBidiControl(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\u2028' || c == '\u2029' || (c >= '\u202A' && c <= '\u202E')
                    || (c >= '\u2066' && c <= '\u2069')) {
                return i;
            }
        }
        return -1;
    }
}
