package dev.waymark.workflow.gc;

import dev.waymark.workflow.WorkflowCollector;
import java.time.Duration;

/**
 * Told about a {@link WorkflowCollector}'s passes (metrics, alerts). Called on the thread that ran
 * the pass; an exception thrown here is logged and ignored.
 */
public interface CollectorListener {

    /** No-op listener. */
    CollectorListener NONE = new CollectorListener() {};

    /** A pass ended: what it did, and how long it took. */
    default void onPass(CollectResult result, Duration elapsed) {}

    /**
     * A scheduled pass failed as a whole (for example, the database was unreachable, or the pass
     * threw an {@link Error}); the next pass still runs on schedule.
     */
    default void onPassFailed(Throwable error) {}
}
