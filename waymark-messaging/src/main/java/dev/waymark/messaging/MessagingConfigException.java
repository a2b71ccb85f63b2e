package dev.waymark.messaging;

import java.io.Serial;

/** Invalid messaging configuration; nothing was started. */
public final class MessagingConfigException extends MessagingException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid option. */
    public MessagingConfigException(String message) {
        super(message, null);
    }

    static void requireParallelism(int n) {
        if (n < 1 || n > 10_000) {
            throw new MessagingConfigException("concurrency must be between 1 and 10000, got " + n);
        }
    }
}
