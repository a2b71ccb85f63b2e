package dev.waymark.subscription;

import java.time.Duration;

/**
 * How often a running subscription writes its checkpoint: after {@code everyEvents} handled events
 * or {@code every} time, whichever comes first, when it catches up, and when it stops. Dead letters
 * always write it at once. Both rules are checked between events; the time rule also before each
 * wait to redeliver a retried event, so that one event retried for long does not hold back the
 * events handled before it. A handler busy inside one call holds the write back. A crash replays
 * at most what was handled since the last write.
 *
 * @param everyEvents events between writes, {@code >= 1}
 * @param every time between writes, {@code >= 0} (0 writes after every event)
 */
public record CheckpointPolicy(int everyEvents, Duration every) {

    /** Default: every 1000 events. */
    public static final int DEFAULT_EVERY_EVENTS = 1000;
    /** Default: every second. */
    public static final Duration DEFAULT_EVERY = Duration.ofSeconds(1);

    /** Validates the policy. */
    public CheckpointPolicy {
        if (everyEvents < 1) {
            throw new SubscriptionConfigException("checkpoint everyEvents must be >= 1, got " + everyEvents);
        }
        if (every == null || every.isNegative()) {
            throw new SubscriptionConfigException("checkpoint interval must be >= 0, got " + every);
        }
    }

    /** The defaults. */
    public static CheckpointPolicy defaults() {
        return new CheckpointPolicy(DEFAULT_EVERY_EVENTS, DEFAULT_EVERY);
    }
}
