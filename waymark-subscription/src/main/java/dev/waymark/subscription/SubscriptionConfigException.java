package dev.waymark.subscription;

import dev.waymark.core.WaymarkConfigException;
import java.io.Serial;

/**
 * An invalid subscription or worker-pool option; the message names the option, the value and the
 * rule. The subscription module's member of the {@link WaymarkConfigException} branch.
 */
public final class SubscriptionConfigException extends WaymarkConfigException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** An invalid option. */
    public SubscriptionConfigException(String message) {
        super(message);
    }
}
