package dev.waymark.store;

/**
 * One look at the store's head, taken by the {@link HeadWatch} of a store handle and shared by
 * every reader of that handle.
 *
 * <p>Taken in one statement, so its parts agree: every event that becomes visible to all-stream
 * and category readers after this probe lies after {@link #head()}, and every event below
 * {@link #horizon()} was already visible when it was taken (no event can ever be added there).
 *
 * @param sequence grows by one with every probe published by the watch; 0 for {@link #NONE}
 * @param head the position of the newest visible event, {@link GlobalPosition#START} when none
 * @param horizon the visibility horizon as a position: before every event of the oldest transaction
 *     still open, after every event of every older one
 * @param hiddenEvents whether committed events were still hidden behind the horizon (an older writing
 *     transaction was open): the watch then probes again within milliseconds, since that
 *     transaction's end signals nobody
 */
public record HeadProbe(long sequence, GlobalPosition head, GlobalPosition horizon, boolean hiddenEvents) {

    /** Before the first probe: nothing is known, any real probe is newer. */
    public static final HeadProbe NONE = new HeadProbe(0, GlobalPosition.START, GlobalPosition.START, false);

    /** Validates the components. */
    public HeadProbe {
        if (sequence < 0 || head == null || horizon == null) {
            throw new IllegalArgumentException("a head probe needs a sequence >= 0, a head and a horizon, got "
                    + sequence + ", " + head + ", " + horizon);
        }
    }
}
