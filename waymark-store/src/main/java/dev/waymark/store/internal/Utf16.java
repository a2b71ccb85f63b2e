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
}
