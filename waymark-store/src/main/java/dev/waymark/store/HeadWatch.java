package dev.waymark.store;

import java.time.Duration;

/**
 * The head of the store as one shared probe sees it: one statement per store handle, run after
 * every wake of the handle (its own appends, a NOTIFY from another handle, a reconnect of the
 * LISTEN connection), once per {@link EventStoreBuilder#fallbackPoll(Duration) fallback interval}
 * whether or not a notification came (so a lost one delays readers by at most that interval), on
 * {@link #request()}, and every few milliseconds, backing off up to the fallback interval, while
 * committed events are hidden behind the horizon. Readers of the handle read only when a probe
 * shows the head past what they have read, instead of each querying on every tick: an idle
 * handle costs one probe per fallback interval, whatever the number of readers.
 *
 * <p>The probe thread starts with the first call of any method here and ends when the store is
 * closed. A probe that fails is logged and retried at the next wake or fallback tick; the latest
 * successful one stays published.
 */
public interface HeadWatch {

    /** The latest published probe, or {@link HeadProbe#NONE} before the first; never blocks. */
    HeadProbe latest();

    /**
     * Waits until a probe newer than {@code sequence} is published, or the timeout elapses.
     *
     * @return the latest probe: the same {@code sequence} when the wait timed out
     * @throws InterruptedException if the waiting thread is interrupted
     */
    HeadProbe awaitAfter(long sequence, Duration timeout) throws InterruptedException;

    /**
     * Waits until a published probe shows the head past {@code head}, or the timeout elapses (on a
     * closed store too); returns at once when the latest probe already does. Unlike
     * {@link #awaitAfter(long, Duration)}, the waiting thread is not woken by probes that find the
     * head where it was: an idle reader sleeps until there is something to read (or its timeout),
     * however often the watch probes. The watch's own fallback probe still bounds the delay after a
     * lost notification.
     *
     * @return the latest probe: its head is not past {@code head} when the wait timed out
     * @throws InterruptedException if the waiting thread is interrupted
     */
    HeadProbe awaitHeadPast(GlobalPosition head, Duration timeout) throws InterruptedException;

    /** Asks for a probe now (coalesced with any other request or wake that comes before it runs). */
    void request();

    /**
     * How often the watch probes on its own while the database answers: the store's
     * {@linkplain EventStoreBuilder#fallbackPoll(Duration) fallback interval} after the last probe
     * (plus the probe's own time, and up to a quarter of a second more when the LISTEN connection's
     * heartbeat, which runs the probe while the connection is up, is stuck on a dead connection). A
     * reader that must look more often asks with {@link #request()}; one that may wait as long needs not.
     */
    Duration probeInterval();
}
