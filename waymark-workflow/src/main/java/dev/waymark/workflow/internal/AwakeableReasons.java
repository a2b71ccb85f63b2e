package dev.waymark.workflow.internal;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.waymark.store.plumbing.Utf16;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import java.util.UUID;

/** The checks of an awakeable failure reason before it is written (a text column and a jsonb journal entry). */
public final class AwakeableReasons {

    private AwakeableReasons() {}

    /**
     * Refuses a reason the database cannot store or that is larger than {@code maxPayloadBytes} as a
     * JSON string.
     *
     * @throws InvalidWorkflowInputException naming the awakeable and what is wrong
     */
    public static void requireStorable(UUID awakeable, String reason, int maxPayloadBytes) {
        // stored in a text column and journaled in a jsonb document, which refuse a NUL and have no
        // form for a lone surrogate (a completion's value is refused the same way by its JSON check);
        // checked before the size, whose JSON encoder throws a bare error on a lone surrogate
        if (reason.indexOf('\u0000') >= 0) {
            throw new InvalidWorkflowInputException("failure reason of awakeable " + awakeable
                    + " holds a NUL character (\\u0000), which the database cannot store");
        }
        int lone = Utf16.loneSurrogate(reason);
        if (lone >= 0) {
            throw new InvalidWorkflowInputException("failure reason of awakeable " + awakeable
                    + " holds a lone UTF-16 surrogate (\\u" + Integer.toHexString(reason.charAt(lone))
                    + "), which has no UTF-8 form");
        }
        int bytes = JsonStringEncoder.getInstance().quoteAsUTF8(reason).length + 2; // and its quotes
        if (bytes > maxPayloadBytes) {
            throw new InvalidWorkflowInputException("failure reason of awakeable " + awakeable + " is " + bytes
                    + " bytes of JSON, the limit is " + maxPayloadBytes + " (maxPayloadBytes)");
        }
    }
}
