package dev.waymark.subscription;

import java.io.Serial;

/** An invalid subscription option; the message names the option, the value and the rule. */
public final class SubscriptionConfigException extends SubscriptionException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid option. */
    public SubscriptionConfigException(String message) {
        super(message);
    }
}
