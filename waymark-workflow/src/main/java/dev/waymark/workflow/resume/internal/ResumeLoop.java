package dev.waymark.workflow.resume.internal;

import dev.waymark.store.EventStore;
import dev.waymark.store.WakeSignal;
import dev.waymark.workflow.backpressure.WorkflowBacklog;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.internal.Advancer;
import dev.waymark.workflow.internal.BacklogSampler;
import dev.waymark.workflow.internal.CascadeRepair;
import dev.waymark.workflow.internal.Deadline;
import dev.waymark.workflow.internal.EngineRuntime;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.LeaseKeeper;
import dev.waymark.workflow.internal.Leases;
import dev.waymark.workflow.internal.LoopWaker;
import dev.waymark.workflow.internal.ResumeParts;
import dev.waymark.workflow.resume.ResumeEvent;
import dev.waymark.workflow.resume.ResumeListener;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeSummary;
import dev.waymark.workflow.resume.ResumeWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The {@link ResumeWorker}: one loop thread that claims due instances and fans their attempts out to
 * virtual threads. Created by {@code WorkflowEngine.resumeWorker(ResumeOptions)} over the engine's parts.
 */
public final class ResumeLoop implements ResumeWorker {

    /**
     * Least time between the start of a pass that claimed nothing and the next pass a wake of the
     * store prompts: with push, every append of the process wakes the loop (its own runs' steps
     * included), and back-to-back empty claims would cost a statement each for nothing.
     */
    static final Duration EMPTY_PASS_GAP = Duration.ofMillis(10);

    private final EngineRuntime runtime;
    private final Instances instances;
    private final WorkflowRegistry registry;
    private final EventStore store;
    private final ResumeOptions options;
    private final Advancer advancer;
    private final Advancer.Policy policy;
    private final LeaseKeeper keeper;
    private final ClaimedAttempts attempts;
    private final ExecutorService advances;
    private final java.util.function.BiConsumer<Instances.Key, Advancer.Advance> advanced;
    private final CascadeRepair cascades;
    private final BacklogSampler backlog;
    /** Attempts running in the process (the engine's runs and its workers' attempts), for the backlog. */
    private final java.util.concurrent.atomic.AtomicLong engineInFlight;
    /** Attempts this worker's loop has in flight. */
    private final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();
    /** What the loop's attempts did since the last pass report. */
    private final java.util.concurrent.atomic.AtomicReference<ResumeSummary> finished = new java.util.concurrent.atomic.AtomicReference<>(
            ResumeSummary.EMPTY);
    /** When the loop passes next (pokes, due times, free slots). */
    private final LoopWaker waker = new LoopWaker();
    private volatile long lastUnknownCheck = System.nanoTime() - ResumeWorker.HOUSEKEEPING_INTERVAL.toNanos();
    private Thread relay;
    private Runnable unhint = () -> {};
    private volatile boolean running;
    /** Set by {@link #close}: a pass in progress claims nothing more. */
    private volatile boolean closing;
    /** Whether the loop is in a pass (else it waits, and an interrupt cuts nothing short). */
    private volatile boolean passing;
    private Thread loop;

    /**
     * An unstarted worker over an engine's parts. Their {@code advanced} hears how each attempt ended
     * (the engine completes in-process waits with it).
     */
    public ResumeLoop(ResumeParts parts, ResumeOptions options) {
        this.advanced = parts.advanced();
        this.runtime = parts.runtime();
        this.instances = runtime.instances();
        this.registry = parts.registry();
        this.store = parts.store();
        this.options = options;
        // a listener that logs crashes and failures itself: the advancer does not log them again
        this.advancer = new Advancer(runtime, options.listener().logsEvents());
        this.policy = Advancer.Policy.of(options.retry(), "retry");
        this.keeper = new LeaseKeeper(instances, "resume-" + UUID.randomUUID(), options.leaseTtl());
        this.attempts = new ClaimedAttempts(runtime, keeper, advancer, policy, options, parts.inFlight(), advanced);
        this.advances = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("waymark-resume-", 0).factory());
        this.backlog = parts.backlog();
        this.engineInFlight = parts.inFlight();
        this.cascades = new CascadeRepair(instances, parts.cancel(), options.cascadeRepairInterval(),
                options.batchLimit());
    }

    /** The options. */
    @Override
    public ResumeOptions options() {
        return options;
    }

    /** The owner id this worker writes into the leases it takes. */
    @Override
    public String owner() {
        return keeper.owner();
    }

    /**
     * One claim-advance pass, in the calling thread: claims up to the batch limit of due instances in
     * one statement and advances them (fanned out to virtual threads, at most the concurrency at once),
     * then returns when all have ended. Also samples the backlog and reports runnable instances of
     * unregistered names. Never throws for a single workflow's failure; a failure of the claim itself
     * propagates.
     */
    @Override
    public ResumeSummary resumeOnce() {
        long started = System.nanoTime();
        repairCascades();
        WorkflowBacklog sample = backlog.refresh();
        int unknown = reportUnknown();
        Leases.DueBatch batch = claim(options.batchLimit());
        ResumeSummary summary = new ResumeSummary(batch.claimed().size(), 0, 0, 0, unknown, 0, 0, 0, 0, 0);
        if (options.concurrency() == 1 || batch.claimed().size() <= 1) {
            for (Leases.Claimed c : batch.claimed()) {
                if (closing || Thread.currentThread().isInterrupted()) {
                    attempts.release(c); // closing: run nothing more after the attempt close interrupted
                    continue;
                }
                summary = summary.plus(attempts.advanceClaimed(c));
            }
        } else {
            summary = summary.plus(advanceAll(batch.claimed()));
        }
        ResumeSummary done = summary;
        safely(() -> options.listener().onPass(done, Duration.ofNanos(System.nanoTime() - started),
                sample.pendingAwakeables(), sample.waiting()));
        return done;
    }

    /** Claims up to {@code limit} due instances (one statement); each is held by the keeper until advanced. */
    private Leases.DueBatch claim(int limit) {
        Leases.DueBatch batch = instances.leases().claimDue(registry.names(), keeper.owner(), keeper.ttl(), limit);
        for (Leases.Claimed c : batch.claimed()) {
            keeper.hold(c.key());
        }
        if (batch.dbNow() != null) {
            waker.databaseNow(batch.dbNow());
        }
        return batch;
    }

    /** Reports runnable instances nobody here can run (never claimed); returns how many. */
    private int reportUnknown() {
        List<Instances.Key> unknown = instances.queries().discoverUnknown(registry.names(), options.batchLimit());
        for (Instances.Key key : unknown) {
            safely(() -> options.listener().onEvent(new ResumeEvent.UnknownName(key.name(), key.id())));
        }
        lastUnknownCheck = System.nanoTime();
        return unknown.size();
    }

    /** Cancels live children of cancelled workflows when due; a failure here never costs the pass. */
    private void repairCascades() {
        try {
            cascades.runIfDue(
                    o -> safely(() -> options.listener().onEvent(new ResumeEvent.CascadeRepaired(o.child().name(),
                            o.child().id(), o.parent().name(), o.parent().id()))),
                    (o, e) -> safely(() -> options.listener().onEvent(new ResumeEvent.TransientError(o.child().name(),
                            o.child().id(), e))));
        } catch (RuntimeException e) {
            safely(() -> options.listener().onEvent(new ResumeEvent.PassFailed(e)));
        }
    }

    private ResumeSummary advanceAll(List<Leases.Claimed> claimed) {
        java.util.concurrent.Semaphore permits = new java.util.concurrent.Semaphore(options.concurrency());
        List<Future<ResumeSummary>> futures = new ArrayList<>();
        for (Leases.Claimed c : claimed) {
            try {
                futures.add(advances.submit(() -> {
                    permits.acquire();
                    try {
                        return closing ? attempts.releaseEmpty(c) : attempts.advanceClaimed(c);
                    } finally {
                        permits.release();
                    }
                }));
            } catch (java.util.concurrent.RejectedExecutionException e) {
                attempts.release(c); // closed meanwhile
            }
        }
        ResumeSummary sum = ResumeSummary.EMPTY;
        for (Future<ResumeSummary> f : futures) {
            try {
                sum = sum.plus(f.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                futures.forEach(x -> x.cancel(true));
                return sum;
            } catch (java.util.concurrent.CancellationException e) {
                // cancelled by close; its lease expires or was released
            } catch (ExecutionException e) {
                sum = sum.plus(new ResumeSummary(0, 0, 0, 0, 0, 0, 0, 0, 1, 0));
                safely(() -> options.listener().onEvent(new ResumeEvent.PassFailed(e.getCause())));
            }
        }
        return sum;
    }

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
     * statement; the look for instances of unregistered names runs every {@link ResumeWorker#HOUSEKEEPING_INTERVAL}.
     */
    @Override
    public synchronized ResumeLoop start() {
        if (loop != null) {
            throw new IllegalStateException("resume worker " + owner() + " already started");
        }
        if (closing) {
            throw new IllegalStateException("resume worker " + owner() + " is closed");
        }
        running = true;
        WakeSignal wake = options.push() ? store.wakeSignal() : null;
        if (wake != null) {
            relay = Thread.ofVirtual().name("waymark-resume-wake-" + owner()).start(() -> relayWakes(wake));
        }
        unhint = runtime.onDue(waker::dueHint);
        loop = Thread.ofPlatform().name("waymark-resume-loop-" + owner()).daemon().start(this::runLoop);
        return this;
    }

    /** Turns every wake of the store into a poke of the loop. */
    private void relayWakes(WakeSignal wake) {
        long seen = wake.generation();
        while (running) {
            try {
                long now = wake.awaitAfter(seen, options.pollInterval());
                if (now != seen) {
                    seen = now;
                    waker.poke();
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void runLoop() {
        while (running) {
            long seen = waker.pokes();
            Round r = Round.IDLE;
            long roundStarted = System.nanoTime();
            passing = true;
            try {
                if (!closing) {
                    r = round();
                }
            } catch (RuntimeException | Error e) {
                // an Error too (a StackOverflowError, an OutOfMemoryError that freed its memory):
                // this loop is what resumes the process's workflows, so it reports and goes on
                passFailed(e);
            } finally {
                passing = false;
            }
            if (!running) {
                break;
            }
            if (r.fullBatch()) {
                continue; // more work than one pass takes
            }
            try {
                waker.awaitNext(seen, r.slotsFull(), () -> inFlight.get() < options.concurrency(), r.nextDueMillis(),
                        options.pollInterval().toMillis(), () -> running);
                if (r.empty()) {
                    waker.awaitGap(roundStarted, EMPTY_PASS_GAP.toNanos(), () -> running);
                }
            } catch (InterruptedException e) {
                break;
            }
        }
    }

    /**
     * What a pass found: whether it filled its batch, its free slots, the next wake time it saw, and
     * whether it claimed nothing (then the next pass a wake prompts waits {@link #EMPTY_PASS_GAP}).
     */
    private record Round(boolean fullBatch, boolean slotsFull, long nextDueMillis, boolean empty) {
        static final Round IDLE = new Round(false, false, Long.MAX_VALUE, true);
    }

    private Round round() {
        long started = System.nanoTime();
        repairCascades();
        if (System.nanoTime() - lastUnknownCheck >= ResumeWorker.HOUSEKEEPING_INTERVAL.toNanos()) {
            int unknown = reportUnknown();
            finished.accumulateAndGet(new ResumeSummary(0, 0, 0, 0, unknown, 0, 0, 0, 0, 0), ResumeSummary::plus);
        }
        int limit = Math.min(options.batchLimit(), Math.max(0, options.concurrency() - inFlight.get()));
        if (limit == 0) {
            return new Round(false, true, Long.MAX_VALUE, false);
        }
        Leases.DueBatch batch = claim(limit);
        for (Leases.Claimed c : batch.claimed()) {
            inFlight.incrementAndGet();
            try {
                advances.execute(() -> {
                    try {
                        ResumeSummary s = closing ? attempts.releaseEmpty(c) : attempts.advanceClaimed(c);
                        finished.accumulateAndGet(s, ResumeSummary::plus);
                    } finally {
                        inFlight.decrementAndGet();
                        waker.slotFreed();
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                inFlight.decrementAndGet();
                attempts.release(c); // closing
            }
        }
        int n = batch.claimed().size();
        finished.accumulateAndGet(new ResumeSummary(n, 0, 0, 0, 0, 0, 0, 0, 0, 0), ResumeSummary::plus);
        reportFinished(Duration.ofNanos(System.nanoTime() - started));
        long next = batch.nextDue() == null || batch.dbNow() == null
                ? Long.MAX_VALUE
                : System.currentTimeMillis() + Math.max(1, Duration.between(batch.dbNow(), batch.nextDue()).toMillis());
        return new Round(n == options.batchLimit(), n == limit && limit < options.batchLimit(), next, n == 0);
    }

    /** Reports the pass: what it claimed, and the attempts that ended since the last report. */
    private void reportFinished(Duration elapsed) {
        ResumeSummary s = finished.getAndSet(ResumeSummary.EMPTY);
        WorkflowBacklog last = backlog.last();
        long pending = last == null ? 0 : last.pendingAwakeables();
        long waiting = last == null ? s.discovered() : last.waiting();
        safely(() -> options.listener().onPass(s, elapsed, pending, waiting));
    }

    /**
     * Stops the loop at once: the attempts in flight are interrupted (an interrupted attempt records
     * no crash) and their leases released, so another worker can take the instances at once. The
     * same as {@code close(Duration.ZERO)}.
     */
    @Override
    public void close() {
        close(Duration.ZERO);
    }

    /**
     * Stops the loop gracefully: the worker claims nothing more, lets the attempts in flight finish
     * for up to {@code grace}, then interrupts those still running (an interrupted attempt records no
     * crash; its step in flight is not journaled and runs again on the next attempt). Every lease it
     * holds is released, so another worker can take the instances at once. Returns once the loop and
     * the attempts have ended (after at most {@code grace} and the interrupted attempts' unwinding).
     *
     * @throws IllegalArgumentException if {@code grace} is null or negative
     */
    @Override
    public void close(Duration grace) {
        if (grace == null || grace.isNegative()) {
            throw new IllegalArgumentException("grace must be >= 0, got " + grace);
        }
        Deadline deadline = Deadline.after(grace);
        boolean interrupted = false;
        Thread t;
        closing = true; // before reading passing: a pass that begins now claims nothing
        synchronized (this) {
            running = false;
            t = loop;
        }
        waker.poke();
        unhint.run();
        if (relay != null) {
            relay.interrupt();
        }
        if (t != null) {
            if (passing) {
                // a pass's attempts finish; it claims nothing more, then the loop sees running is false
                interrupted |= !Deadline.joined(t, deadline.remainingNanos());
            }
            t.interrupt(); // waiting for the next pass, past the grace, or our caller was interrupted
            interrupted |= !Deadline.joined(t, TimeUnit.SECONDS.toNanos(30));
        }
        advances.shutdown();
        if (!interrupted) {
            try {
                advances.awaitTermination(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        advances.shutdownNow(); // interrupted attempts record nothing and release their leases
        try {
            if (!advances.awaitTermination(30, TimeUnit.SECONDS)) {
                org.slf4j.LoggerFactory.getLogger(ResumeLoop.class)
                        .warn("waymark resume: attempts still running after 30 s; their leases expire by themselves");
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        keeper.close();
        if (!finished.get().equals(ResumeSummary.EMPTY)) {
            try {
                reportFinished(Duration.ZERO); // attempts that ended after the loop's last pass
            } catch (RuntimeException | Error e) {
                passFailed(e); // a listener's Error (safely lets those through) must not escape close
            }
        }
    }

    /**
     * The runnable backlog of the schema (see {@link WorkflowBacklog}), sampled at most the engine's
     * {@code backlogSampleInterval} ago, shared with the engine.
     */
    @Override
    public WorkflowBacklog backlog() {
        return backlog.current();
    }

    /** Attempts this worker's loop has in flight now (at most {@link ResumeOptions#concurrency()}). */
    @Override
    public int inFlight() {
        return inFlight.get();
    }

    /** Reports a failed pass; whatever the listener throws, the loop goes on. */
    private void passFailed(Throwable e) {
        try {
            options.listener().onEvent(new ResumeEvent.PassFailed(e));
        } catch (RuntimeException | Error listenerFailure) {
            e.addSuppressed(listenerFailure);
            org.slf4j.LoggerFactory.getLogger(ResumeLoop.class).error("waymark resume: pass failed", e);
        }
    }

    private void safely(Runnable r) {
        runtime.safely(r); // the engine's one guard around listener calls
    }
}
