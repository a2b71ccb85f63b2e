package dev.waymark.subscription.internal;

import dev.waymark.store.GlobalPosition;
import dev.waymark.subscription.CheckpointPolicy;

/**
 * When a subscription writes its checkpoint: the count and interval rules of its
 * {@link CheckpointPolicy}, against the position it last wrote. Used by the worker's thread only.
 */
final class CheckpointCadence {

    private final int everyEvents;
    private final long everyNanos;
    private GlobalPosition saved;
    private int unsaved;
    private long lastSave;

    CheckpointCadence(CheckpointPolicy policy) {
        this.everyEvents = policy.everyEvents();
        this.everyNanos = Durations.nanos(policy.every());
    }

    /** The subscription starts at {@code position}, which is its checkpoint: the interval counts from now. */
    void startAt(GlobalPosition position) {
        written(position);
    }

    /** One more event was passed (handled or skipped); returns whether a write is now due, by count or by time. */
    boolean passed() {
        unsaved++;
        return unsaved >= everyEvents || dueByTime();
    }

    /** Whether the interval has passed since the last write (or the start). */
    boolean dueByTime() {
        return System.nanoTime() - lastSave >= everyNanos;
    }

    /** Whether events were passed since the last write. */
    boolean hasUnsaved() {
        return unsaved > 0;
    }

    /** Whether {@code position} lies past the last write (false before the start). */
    boolean isAhead(GlobalPosition position) {
        return saved != null && position.isAfter(saved);
    }

    /** The checkpoint now stands at {@code position}. */
    void written(GlobalPosition position) {
        saved = position;
        unsaved = 0;
        lastSave = System.nanoTime();
    }

    /** The events passed since the last write need none (they lie at or below it). */
    void upToDate() {
        unsaved = 0;
    }
}
