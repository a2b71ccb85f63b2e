package dev.waymark.workflow.resume;

import dev.waymark.core.Stoppable;
import dev.waymark.workflow.backpressure.WorkflowBacklog;
import java.time.Duration;

/**
 * Notices workflows that have work to do and runs them: each pass asks the database for runnable
 * instances (running ones, e.g. after a crash, and suspended ones whose sleep came due), claims each
 * through an expiring, epoch-fenced lease, and re-invokes it through the registry; replay skips every
 * journaled step. Many workers run side by side; a live lease skips only that instance.
 *
 * <p>Durable sleeps are fired by this worker: a sleeping instance becomes runnable at its wake time,
 * and its replay journals the sleep as done. Awakeables and children wake their workflow themselves
 * (their settlement flips it to running in the same transaction); this worker then runs it.
 *
 * <p>Cancellation cascades a crash cut short are finished here too: every
 * {@link ResumeOptions#cascadeRepairInterval()} (the first pass included) the worker cancels live
 * children of cancelled workflows, which the cancelling
 * process died before reaching, and reports each as {@link ResumeEvent.CascadeRepaired}.
 *
 * <p>{@link #start()} runs the loop on its own thread. The worker is {@link Stoppable}:
 * {@link #stop(Duration)} claims nothing more, lets the attempts in flight finish for up to the
 * timeout, then interrupts them (an interrupted attempt records no crash) and releases their leases,
 * so that another worker can take the instances at once; {@link #close()} is {@code stop(Duration.ZERO)}.
 *
 * <p>Create one with {@link dev.waymark.workflow.WorkflowEngine#resumeWorker(ResumeOptions)}, its
 * options with {@link ResumeOptions#builder()}.
 */
public interface ResumeWorker extends Stoppable {

    /**
     * How often the loop looks for runnable instances of names not registered here (every
     * {@link #resumeOnce()} does).
     */
    Duration HOUSEKEEPING_INTERVAL = Duration.ofSeconds(10);

    /** The options. */
    ResumeOptions options();

    /** The owner id this worker writes into the leases it takes. */
    String owner();

    /**
     * One claim-advance pass, in the calling thread: claims up to the batch limit of due instances in
     * one statement and advances them (fanned out to virtual threads, at most the concurrency at once),
     * then returns when all have ended. Also samples the backlog and reports runnable instances of
     * unregistered names. Never throws for a single workflow's failure; a failure of the claim itself
     * propagates.
     */
    ResumeSummary resumeOnce();

    /**
     * Starts the loop on a thread of its own. Each pass claims, in one statement, as many due instances
     * as the worker has free slots (at most the batch limit; the concurrency is the most attempts in
     * flight at once), starts them on virtual threads, and does not wait for them: the attempts in
     * flight follow the backlog up to the concurrency. The next pass starts at once after a pass that
     * filled its batch; after a pass that filled the free slots, when an attempt ends; otherwise at
     * the earliest wake time it knows of (a run in this process that parks on a sleep tells it), after
     * the poll interval, or (with {@link ResumeOptions#push()}) when the store's wake signal fires:
     * after any append through the store handle (a wake, a completion, a start, an application event),
     * on NOTIFY of another handle's append, and on the store's fallback tick. An idle pass is one
     * statement; the look for instances of unregistered names runs every {@link #HOUSEKEEPING_INTERVAL}.
     *
     * <p>A second or concurrent call starts nothing more and returns this worker (as {@code
     * ProcessingApp.start()} does).
     *
     * @return this worker
     * @throws IllegalStateException if the worker was stopped or closed: build a new one with {@code
     *     engine.resumeWorker(options)}
     */
    ResumeWorker start();

    /**
     * Stops the loop gracefully: the worker claims nothing more, lets the attempts in flight finish
     * for up to {@code timeout}, then interrupts those still running (an interrupted attempt records
     * no crash; its step in flight is not journaled and runs again on the next attempt) and gives them
     * up to 10 s more to unwind. Every lease it holds is released, so another worker can take the
     * instances at once. Answers whether the loop and every attempt had ended: false means an attempt
     * ignores its interrupt and goes on in the background (its lease then expires by itself). A
     * second or concurrent call starts no second stop: it waits, within its own timeout, for the
     * first to answer and then for what the first left running to end. An interrupt of the caller
     * ends the wait at once (the attempts are interrupted), keeping the interrupt flag.
     *
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    @Override
    boolean stop(Duration timeout);

    /**
     * Stops the loop at once: {@code stop(Duration.ZERO)}. The attempts in flight are interrupted (an
     * interrupted attempt records no crash) and their leases released, so another worker can take the
     * instances at once.
     */
    @Override
    default void close() {
        stop(Duration.ZERO);
    }

    /**
     * The runnable backlog of the schema (see {@link WorkflowBacklog}), sampled at most the engine's
     * {@code backlogSampleInterval} ago, shared with the engine.
     */
    WorkflowBacklog backlog();

    /** Attempts this worker's loop has in flight now (at most {@link ResumeOptions#concurrency()}). */
    int inFlight();
}
