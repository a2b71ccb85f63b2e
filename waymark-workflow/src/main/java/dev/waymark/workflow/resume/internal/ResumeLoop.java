package dev.waymark.workflow.resume.internal;

import dev.waymark.store.EventStore;
import dev.waymark.store.WakeSignal;
import dev.waymark.workflow.backpressure.WorkflowBacklog;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.internal.Advancer;
import dev.waymark.workflow.internal.BacklogSampler;
import dev.waymark.workflow.internal.Deadline;
import dev.waymark.workflow.internal.EngineRuntime;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.LeaseKeeper;
import dev.waymark.workflow.internal.Leases;
import dev.waymark.workflow.internal.LoopWaker;
import dev.waymark.workflow.internal.ResumeParts;
import dev.waymark.workflow.internal.StopOnce;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeSummary;
import dev.waymark.workflow.resume.ResumeWorker;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.LoggerFactory;

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
    private final LeaseKeeper keeper;
    private final ClaimedAttempts attempts;
    private final PassHousekeeping housekeeping;
    private final ExecutorService advances;
    private final BacklogSampler backlog;
    /** Attempts this worker's loop has in flight. */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** What the loop's attempts did since the last pass report. */
    private final AtomicReference<ResumeSummary> finished = new AtomicReference<>(ResumeSummary.EMPTY);
    /** When the loop passes next (pokes, due times, free slots). */
    private final LoopWaker waker = new LoopWaker();
    private final StopOnce stopping = new StopOnce("resume worker", this::stopAll, this::awaitStopped);
    private Thread relay;
    private Runnable unhint = () -> {};
    private volatile boolean running;
    /** Set by {@link #stop}: a pass in progress claims nothing more. */
    private volatile boolean closing;
    /** Whether the loop is in a pass (else it waits, and an interrupt cuts nothing short). */
    private volatile boolean passing;
    private Thread loop;

    /**
     * An unstarted worker over an engine's parts. Their {@code advanced} hears how each attempt ended
     * (the engine completes in-process waits with it).
     */
    public ResumeLoop(ResumeParts parts, ResumeOptions options) {
        this.runtime = parts.runtime();
        this.instances = runtime.instances();
        this.registry = parts.registry();
        this.store = parts.store();
        this.options = options;
        // a listener that logs crashes and failures itself: the advancer does not log them again
        Advancer advancer = new Advancer(runtime, options.listener().logsEvents());
        this.keeper = new LeaseKeeper(instances, "resume-" + UUID.randomUUID(), options.leaseTtl());
        this.attempts = new ClaimedAttempts(runtime, keeper, advancer, Advancer.Policy.of(options.retry(), "retry"),
                options, parts.inFlight(), parts.advanced());
        this.housekeeping = new PassHousekeeping(parts, options);
        this.advances = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("waymark-resume-", 0).factory());
        this.backlog = parts.backlog();
    }

    @Override
    public ResumeOptions options() {
        return options;
    }

    @Override
    public String owner() {
        return keeper.owner();
    }

    @Override
    public ResumeSummary resumeOnce() {
        long started = System.nanoTime();
        housekeeping.repairCascades();
        WorkflowBacklog sample = backlog.refresh();
        int unknown = housekeeping.reportUnknown();
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
            summary = summary.plus(attempts.advanceAll(batch.claimed(), advances, () -> closing));
        }
        ResumeSummary done = summary;
        housekeeping.safely(() -> options.listener().onPass(done, Duration.ofNanos(System.nanoTime() - started),
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

    @Override
    public synchronized ResumeLoop start() {
        if (closing) {
            throw new IllegalStateException("resume worker " + owner() + " is closed");
        }
        if (loop != null) {
            return this; // started already: one loop, as ProcessingApp.start()
        }
        running = true;
        LoggerFactory.getLogger(ResumeLoop.class).info("waymark resume worker {}: {}", owner(), options);
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
                housekeeping.passFailed(e);
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
        housekeeping.repairCascades();
        if (housekeeping.unknownDue()) {
            int unknown = housekeeping.reportUnknown();
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
            } catch (RejectedExecutionException e) {
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
        housekeeping.safely(() -> options.listener().onPass(s, elapsed, pending, waiting));
    }

    @Override
    public boolean stop(Duration timeout) {
        return stopping.stop(timeout);
    }

    /**
     * The stop itself (once): claims nothing more, lets the attempts finish until the deadline,
     * interrupts the rest and waits {@link StopOnce#FORCED_STOP_WAIT} more for them and the loop.
     */
    private boolean stopAll(Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
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
                interrupted = !Deadline.joined(t, deadline.remainingNanos());
            }
            t.interrupt(); // waiting for the next pass, past the timeout, or our caller was interrupted
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
        boolean done = false;
        if (!interrupted) {
            try {
                done = awaitStopped(StopOnce.FORCED_STOP_WAIT.toNanos());
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            done = (t == null || !t.isAlive()) && advances.isTerminated();
        } else if (!done) {
            LoggerFactory.getLogger(ResumeLoop.class).warn("waymark resume: {} still running {} s after it was"
                    + " interrupted; its leases expire by themselves",
                    t != null && t.isAlive() ? "the loop" : "an attempt", StopOnce.FORCED_STOP_WAIT.toSeconds());
        }
        keeper.close();
        if (!finished.get().equals(ResumeSummary.EMPTY)) {
            try {
                reportFinished(Duration.ZERO); // attempts that ended after the loop's last pass
            } catch (RuntimeException | Error e) {
                housekeeping.passFailed(e); // a listener's Error (safely lets those through) must not escape stop
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return done;
    }

    /** Whether the loop and every attempt have ended, waiting up to {@code nanos}. */
    private boolean awaitStopped(long nanos) throws InterruptedException {
        Deadline deadline = Deadline.after(Duration.ofNanos(nanos));
        Thread t;
        synchronized (this) {
            t = loop;
        }
        if (t != null) {
            TimeUnit.NANOSECONDS.timedJoin(t, deadline.remainingNanos());
            if (t.isAlive()) {
                return false;
            }
        }
        return advances.awaitTermination(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public WorkflowBacklog backlog() {
        return backlog.current();
    }

    @Override
    public int inFlight() {
        return inFlight.get();
    }
}
