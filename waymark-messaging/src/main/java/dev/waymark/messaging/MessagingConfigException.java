package dev.waymark.messaging;

import dev.waymark.core.WaymarkConfigException;
import java.io.Serial;

/**
 * Invalid messaging or Kafka configuration; nothing was started. The message names the option, the
 * value and the rule. The messaging module's member of the {@link WaymarkConfigException} branch.
 */
public final class MessagingConfigException extends WaymarkConfigException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid option. */
    public MessagingConfigException(String message) {
        super(message);
    }

    static void requireParallelism(int n) {
        if (n < 1 || n > 10_000) {
            throw new MessagingConfigException("concurrency must be between 1 and 10000, got " + n);
        }
    }
}
