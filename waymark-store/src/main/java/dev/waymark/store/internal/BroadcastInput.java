package dev.waymark.store.internal;

import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.plumbing.Utf16;

/** Validates the topic and message of a broadcast before anything is sent. */
final class BroadcastInput {

    private BroadcastInput() {}

    /** Returns {@code topic} if it is a valid broadcast topic. */
    static String topic(String topic) {
        if (topic == null || topic.isBlank()) {
            throw new InvalidInputException("broadcast topic must not be null or blank");
        }
        return checked("broadcast topic", topic, StoreInternals.MAX_TOPIC);
    }

    /** Returns {@code message} if it is a valid broadcast message. */
    static String message(String message) {
        if (message == null) {
            throw new InvalidInputException("broadcast message must not be null");
        }
        return checked("broadcast message", message, StoreInternals.MAX_BROADCAST_MESSAGE);
    }

    private static String checked(String what, String text, int max) {
        if (text.length() > max) {
            throw new InvalidInputException(what + " is " + text.length() + " characters, the limit is " + max);
        }
        for (int i = 0; i < text.length(); i++) {
            if (Character.isISOControl(text.charAt(i))) {
                throw new InvalidInputException(what + " holds a control character at index " + i);
            }
        }
        int surrogate = Utf16.loneSurrogate(text);
        if (surrogate >= 0) {
            throw new InvalidInputException(what + " holds a lone UTF-16 surrogate at index " + surrogate);
        }
        return text;
    }
}
