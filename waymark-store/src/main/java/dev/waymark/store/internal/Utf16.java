package dev.waymark.store.internal;

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
}
