package dev.waymark.messaging;

/**
 * A snapshot of one processor.
 *
 * @param id the processor id
 * @param lifecycle where it is in its life
 * @param received messages pulled from the source
 * @param processed messages finalized with ok or retry
 * @param failed handler exceptions and dead letters
 * @param retried messages finalized with retry
 * @param deadLettered messages finalized with a dead letter
 * @param inFlight handlers running now
 * @param inboxDepth messages pulled but not yet started
 * @param failure why it failed or halted, or null; the typed failure is {@link ProcessingApp#failure(String)}
 * @param failedMessageId the message being processed or finalized when it failed, or null
 */
public record ProcessorState(
        String id,
        Lifecycle lifecycle,
        long received,
        long processed,
        long failed,
        long retried,
        long deadLettered,
        int inFlight,
        int inboxDepth,
        String failure,
        String failedMessageId) {

    /** A processor's life. */
    public enum Lifecycle {
        /** Created, not started. */
        STARTING,
        /** Taking messages. */
        RUNNING,
        /** Stopping: its source is ending and it finalizes what it took. */
        DRAINING,
        /** A handler halted it; it ended gracefully. */
        HALTED,
        /** It failed. */
        FAILED,
        /** It ended: its source finished, or the app stopped. */
        STOPPED
    }
}
