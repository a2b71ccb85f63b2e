package dev.waymark.workflow.resume;

import dev.waymark.workflow.WorkflowConfigException;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.internal.Args;
import java.time.Duration;

/**
 * Options of a {@link ResumeWorker}. Immutable; {@link #defaults()} then {@code with...} methods,
 * each validating its value and naming it in the error: an {@link WorkflowConfigException}
 * for a value out of range or null.
 *
 * @param pollInterval the longest wait between the end of a pass and the next pass (default 1 s). Without
 *     {@code push} the loop waits exactly this. With {@code push} it also ends the wait when the store's
 *     {@link dev.waymark.store.WakeSignal} fires: after every append through the store handle (a start,
 *     a settlement, a retry, a workflow's end, any event of the application's), on NOTIFY of another
 *     handle's append (one per {@code notifyWindow}), and on the store's fallback tick
 *     ({@code EventStoreBuilder.fallbackPoll}, 1 s by default); so an idle pushed worker passes every
 *     {@code min(pollInterval, fallbackPoll)}, and a busy store starts a pass after each of its appends
 * @param maxAttempts crashes before a workflow is marked failed (default 5)
 * @param leaseTtl lease of a claimed instance; renewed every third of it while the attempt runs (default
 *     {@link dev.waymark.workflow.WorkflowEngine#DEFAULT_LEASE_TTL}, 30 s, the engine's too: a crashed
 *     worker's instances are taken over about this long after its last renewal)
 * @param batchLimit most due instances one pass claims (one statement), oldest due first (default
 *     {@link #DEFAULT_BATCH_LIMIT}, 100)
 * @param concurrency most attempts in flight at once, on virtual threads (default {@link #DEFAULT_CONCURRENCY},
 *     64): the started loop claims only as many due instances as it has free slots, so the attempts in
 *     flight follow the backlog up to this bound; each attempt holds a pooled connection only while one of
 *     its statements runs (see docs/OPERATIONS.md for sizing the pool)
 * @param backoffBase first crash backoff; doubles per crash (default 2 s)
 * @param backoffCap longest crash backoff (default 64 s)
 * @param push whether the loop also wakes on the store's wake signal (default true; see {@code pollInterval})
 * @param cascadeRepairInterval how often the worker looks for cancellation cascades a crash cut short
 *     and finishes them (the first pass included; default 60 s)
 * @param listener log events and per-pass summaries (default SLF4J)
 */
public record ResumeOptions(Duration pollInterval, int maxAttempts, Duration leaseTtl, int batchLimit, int concurrency,
        Duration backoffBase, Duration backoffCap, boolean push, Duration cascadeRepairInterval,
        ResumeListener listener) {

    /** The default {@link #concurrency()}: most attempts one worker has in flight at once. */
    public static final int DEFAULT_CONCURRENCY = 64;

    /** The default {@link #batchLimit()}: most instances one pass claims. */
    public static final int DEFAULT_BATCH_LIMIT = 100;

    /** Validates every field. */
    public ResumeOptions {
        positive(pollInterval, "pollInterval");
        positive(leaseTtl, "leaseTtl");
        positive(backoffBase, "backoffBase");
        positive(backoffCap, "backoffCap");
        positive(cascadeRepairInterval, "cascadeRepairInterval");
        if (maxAttempts < 1) {
            throw new WorkflowConfigException("maxAttempts must be >= 1, got " + maxAttempts);
        }
        if (batchLimit < 1 || batchLimit > 10_000) {
            throw new WorkflowConfigException("batchLimit must be in [1, 10000], got " + batchLimit);
        }
        if (concurrency < 1 || concurrency > 1024) {
            throw new WorkflowConfigException("concurrency must be in [1, 1024], got " + concurrency);
        }
        if (backoffCap.compareTo(backoffBase) < 0) {
            throw new WorkflowConfigException("backoffCap " + backoffCap + " is below backoffBase " + backoffBase);
        }
        if (leaseTtl.toMillis() < 30) {
            throw new WorkflowConfigException("leaseTtl must be >= 30 ms, got " + leaseTtl);
        }
        Args.option(listener, "listener");
    }

    /** The defaults. */
    public static ResumeOptions defaults() {
        return new ResumeOptions(Duration.ofSeconds(1), 5, WorkflowEngine.DEFAULT_LEASE_TTL, DEFAULT_BATCH_LIMIT,
                DEFAULT_CONCURRENCY, Duration.ofSeconds(2),
                Duration.ofSeconds(64), true, Duration.ofSeconds(60), ResumeListener.LOGGING);
    }

    /** With another poll interval. */
    public ResumeOptions withPollInterval(Duration v) {
        return new ResumeOptions(v, maxAttempts, leaseTtl, batchLimit, concurrency, backoffBase, backoffCap, push, cascadeRepairInterval, listener);
    }

    /** With another crash budget. */
    public ResumeOptions withMaxAttempts(int v) {
        return new ResumeOptions(pollInterval, v, leaseTtl, batchLimit, concurrency, backoffBase, backoffCap, push, cascadeRepairInterval, listener);
    }

    /** With another lease TTL. */
    public ResumeOptions withLeaseTtl(Duration v) {
        return new ResumeOptions(pollInterval, maxAttempts, v, batchLimit, concurrency, backoffBase, backoffCap, push, cascadeRepairInterval, listener);
    }

    /** With another per-pass limit. */
    public ResumeOptions withBatchLimit(int v) {
        return new ResumeOptions(pollInterval, maxAttempts, leaseTtl, v, concurrency, backoffBase, backoffCap, push, cascadeRepairInterval, listener);
    }

    /** With another concurrency. */
    public ResumeOptions withConcurrency(int v) {
        return new ResumeOptions(pollInterval, maxAttempts, leaseTtl, batchLimit, v, backoffBase, backoffCap, push, cascadeRepairInterval, listener);
    }

    /** With another crash backoff. */
    public ResumeOptions withBackoff(Duration base, Duration cap) {
        return new ResumeOptions(pollInterval, maxAttempts, leaseTtl, batchLimit, concurrency, base, cap, push, cascadeRepairInterval, listener);
    }

    /** With the push-aware loop on or off. */
    public ResumeOptions withPush(boolean v) {
        return new ResumeOptions(pollInterval, maxAttempts, leaseTtl, batchLimit, concurrency, backoffBase, backoffCap, v, cascadeRepairInterval, listener);
    }

    /** With another interval between looks for cancellation cascades a crash cut short. */
    public ResumeOptions withCascadeRepairInterval(Duration v) {
        return new ResumeOptions(pollInterval, maxAttempts, leaseTtl, batchLimit, concurrency, backoffBase, backoffCap, push, v,
                listener);
    }

    /** With another listener. */
    public ResumeOptions withListener(ResumeListener v) {
        return new ResumeOptions(pollInterval, maxAttempts, leaseTtl, batchLimit, concurrency, backoffBase, backoffCap, push, cascadeRepairInterval, v);
    }

    private static void positive(Duration d, String what) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new WorkflowConfigException(what + " must be > 0, got " + d);
        }
    }
}
