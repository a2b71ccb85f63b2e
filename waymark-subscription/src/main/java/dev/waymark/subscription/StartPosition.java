package dev.waymark.subscription;

import dev.waymark.store.GlobalPosition;

/**
 * Where a subscription starts reading. The checkpoint forms resume from the stored checkpoint and
 * say explicitly what to do when there is none; the first checkpoint is written at once, so a
 * restart before the first event never moves the start.
 */
public sealed interface StartPosition {

    /** The checkpoint, or the first event when there is none (the default). */
    static StartPosition checkpointOrBeginning() {
        return new FromCheckpoint(Missing.BEGINNING);
    }

    /** The checkpoint, or the current head (only new events) when there is none. */
    static StartPosition checkpointOrEnd() {
        return new FromCheckpoint(Missing.END);
    }

    /** The checkpoint; starting fails with {@link CheckpointMissingException} when there is none. */
    static StartPosition checkpointOrFail() {
        return new FromCheckpoint(Missing.FAIL);
    }

    /** Just after {@code position}, whatever the checkpoint says (checkpoints never move backwards). */
    static StartPosition after(GlobalPosition position) {
        return new After(position);
    }

    /** What to do when no checkpoint is stored. */
    enum Missing {
        /** Start at the first event. */
        BEGINNING,
        /** Start after the current head. */
        END,
        /** Refuse to start. */
        FAIL
    }

    /**
     * Resume from the checkpoint.
     *
     * @param whenMissing what to do without one
     */
    record FromCheckpoint(Missing whenMissing) implements StartPosition {
        /** Validates the policy. */
        public FromCheckpoint {
            if (whenMissing == null) {
                throw new SubscriptionConfigException("missing-checkpoint policy must not be null");
            }
        }
    }

    /**
     * Start after an explicit position.
     *
     * @param position the position, exclusive
     */
    record After(GlobalPosition position) implements StartPosition {
        /** Validates the position. */
        public After {
            if (position == null) {
                throw new SubscriptionConfigException("start position must not be null");
            }
        }
    }
}
