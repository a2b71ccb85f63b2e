package dev.waymark.subscription.internal;

import dev.waymark.store.plumbing.Utf16;

/** Text the library stores on a caller's behalf, cut to a bound. */
public final class Bounded {

    private Bounded() {}

    /**
     * {@code text} {@link Utf16#storable storable}, and at most {@code max} chars: a longer text keeps
     * its first {@code max - 1} chars, one fewer if that would split a surrogate pair, and ends
     * with {@code '…'}.
     */
    public static String text(String text, int max) {
        String storable = Utf16.storable(text);
        if (storable.length() <= max) {
            return storable;
        }
        int end = max - 1;
        if (Character.isHighSurrogate(storable.charAt(end - 1)) && Character.isLowSurrogate(storable.charAt(end))) {
            end--;
        }
        return storable.substring(0, end) + '\u2026';
    }
}
