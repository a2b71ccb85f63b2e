package dev.waymark.store.internal;

import java.time.Duration;

/**
 * The notifier's timing, validated by the store builder.
 *
 * @param enabled whether to LISTEN and NOTIFY at all (local wake-ups always work)
 * @param coalesceWindow at most one NOTIFY per this window
 * @param fallbackPoll the tick that wakes waiters even without a notification
 * @param reconnectInitial the first reconnect delay of the LISTEN connection
 * @param reconnectMax the cap of the doubling reconnect delay
 */
public record NotifierSettings(
        boolean enabled, Duration coalesceWindow, Duration fallbackPoll, Duration reconnectInitial,
        Duration reconnectMax) {}
