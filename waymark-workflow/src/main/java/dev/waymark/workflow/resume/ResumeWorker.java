package dev.waymark.workflow.resume;

import dev.waymark.store.EventStore;
import dev.waymark.store.WakeSignal;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.internal.Advancer;
import dev.waymark.workflow.internal.CascadeRepair;
import dev.waymark.workflow.internal.Deadline;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.LeaseKeeper;
import dev.waymark.workflow.internal.Leases;
import dev.waymark.workflow.internal.ResumeWorkers;
import dev.waymark.workflow.internal.Runtime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

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
 * <p>{@link #start()} runs the loop on its own thread; {@link #close()} stops it and interrupts the
 * attempts in flight (an interrupted attempt records no crash) and releases their leases, so that
 * another worker can take the instances at once; {@link #close(Duration)} lets them finish first,
 * for up to a grace.
 *
 * <p>Create one with {@link dev.waymark.workflow.WorkflowEngine#resumeWorker(ResumeOptions)}; the
 * class has no public constructor.
 */
public final class ResumeWorker implements AutoCloseable {

    static {
        ResumeWorkers.register(ResumeWorker::new);
    }

    private final Runtime runtime;
    private final Instances instances;
    private final WorkflowRegistry registry;
    private final EventStore store;
    private final ResumeOptions options;
    private final Advancer advancer;
    private final Advancer.Policy policy;
    private final LeaseKeeper keeper;
    private final ExecutorService advances;
    private final java.util.function.BiConsumer<Instances.Key, Advancer.Advance> advanced;
    private final CascadeRepair cascades;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition stopped = lock.newCondition();
    private volatile boolean running;
    /** Set by {@link #close}: a pass in progress claims nothing more. */
    private volatile boolean closing;
    /** Whether the loop is in a pass (else it waits, and an interrupt cuts nothing short). */
    private volatile boolean passing;
    private Thread loop;

    /**
     * A worker over an engine's parts (through {@link ResumeWorkers#create}). Its {@code advanced}
     * hears how each attempt ended (the engine completes in-process waits with it).
     */
    private ResumeWorker(ResumeWorkers.Parts parts, ResumeOptions options) {
        this.advanced = parts.advanced();
        this.runtime = parts.runtime();
        this.instances = runtime.instances();
        this.registry = parts.registry();
        this.store = parts.store();
        this.options = options;
        // a listener that logs crashes and failures itself: the advancer does not log them again
        this.advancer = new Advancer(runtime, options.listener().logsEvents());
        this.policy = new Advancer.Policy(options.maxAttempts(), options.backoffBase(), options.backoffCap());
        this.keeper = new LeaseKeeper(instances, "resume-" + UUID.randomUUID(), options.leaseTtl());
        this.advances = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("waymark-resume-", 0).factory());
        this.cascades = new CascadeRepair(instances, parts.cancel(), options.cascadeRepairInterval(),
                options.batchLimit());
    }

    /** The options. */
    public ResumeOptions options() {
        return options;
    }

    /** The owner id this worker writes into the leases it takes. */
    public String owner() {
        return keeper.owner();
    }

    /**
     * One discover-claim-advance pass, in the calling thread (advances fan out to virtual threads up
     * to the concurrency). Never throws for a single workflow's failure; a failure of discovery
     * itself propagates.
     */
    public ResumeSummary resumeOnce() {
        long started = System.nanoTime();
        repairCascades();
        long pendingAwakeables = instances.awakeables().countPending();
        java.util.Set<String> names = registry.names();
        List<Instances.Key> candidates = instances.queries().discover(names, options.batchLimit());
        // runnable instances nobody here can run: counted and reported, never claimed, never in the batch
        List<Instances.Key> unknown = instances.queries().discoverUnknown(names, options.batchLimit());
        for (Instances.Key key : unknown) {
            safely(() -> options.listener().onEvent(new ResumeEvent.UnknownName(key.name(), key.id())));
        }
        ResumeSummary summary = new ResumeSummary(candidates.size(), 0, 0, 0, unknown.size(), 0, 0, 0, 0, 0);
        if (options.concurrency() == 1 || candidates.size() <= 1) {
            for (Instances.Key key : candidates) {
                if (closing || Thread.currentThread().isInterrupted()) {
                    break; // closing: claim nothing more after the attempt close interrupted
                }
                summary = summary.plus(advanceOne(key));
            }
        } else {
            summary = summary.plus(advanceAll(candidates));
        }
        ResumeSummary done = summary;
        safely(() -> options.listener().onPass(done, Duration.ofNanos(System.nanoTime() - started), pendingAwakeables,
                candidates.size()));
        return done;
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

    private ResumeSummary advanceAll(List<Instances.Key> candidates) {
        java.util.concurrent.Semaphore permits = new java.util.concurrent.Semaphore(options.concurrency());
        List<Future<ResumeSummary>> futures = new ArrayList<>();
        for (Instances.Key key : candidates) {
            futures.add(advances.submit(() -> {
                permits.acquire();
                try {
                    return advanceOne(key);
                } finally {
                    permits.release();
                }
            }));
        }
        ResumeSummary sum = ResumeSummary.EMPTY;
        for (Future<ResumeSummary> f : futures) {
            try {
                sum = sum.plus(f.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                futures.forEach(x -> x.cancel(true));
                return sum;
            } catch (ExecutionException e) {
                sum = sum.plus(new ResumeSummary(0, 0, 0, 0, 0, 0, 0, 0, 1, 0));
                safely(() -> options.listener().onEvent(new ResumeEvent.PassFailed(e.getCause())));
            }
        }
        return sum;
    }

    private ResumeSummary advanceOne(Instances.Key key) {
        if (closing) {
            return ResumeSummary.EMPTY; // closing: claim nothing more (attempts in flight may finish)
        }
        if (registry.find(key.name()).isEmpty()) {
            safely(() -> options.listener().onEvent(new ResumeEvent.UnknownName(key.name(), key.id())));
            return new ResumeSummary(0, 0, 0, 0, 1, 0, 0, 0, 0, 0);
        }
        Optional<Leases.Claim> claim;
        try {
            claim = instances.leases().claim(key.name(), key.id(), keeper.owner(), keeper.ttl());
        } catch (RuntimeException e) {
            safely(() -> options.listener().onEvent(new ResumeEvent.TransientError(key.name(), key.id(), e)));
            return new ResumeSummary(0, 0, 0, 0, 0, 0, 0, 0, 1, 0);
        }
        if (claim.isEmpty()) {
            return new ResumeSummary(0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
        }
        Leases.Claim c = claim.get();
        if (c.previousExpiry() != null) {
            Duration since = Duration.between(c.previousExpiry(), c.claimedAt());
            safely(() -> options.listener().onRecovered(key.name(), key.id(), since));
        }
        Advancer.Advance a = advancer.advance(key, c.epoch(), keeper, policy, null);
        try {
            advanced.accept(key, a);
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(ResumeWorker.class).warn("waymark resume: advance hook failed", e);
        }
        return switch (a.result()) {
            case COMPLETED -> new ResumeSummary(0, 1, 1, 0, 0, 0, 0, 0, 0, 0);
            case SUSPENDED -> new ResumeSummary(0, 1, 0, 1, 0, 0, 0, 0, 0, 0);
            case CANCELLED -> new ResumeSummary(0, 1, 0, 0, 0, 0, 1, 0, 0, 0);
            case FAILED -> {
                if (a.error() != null) { // the last crash: reported as a crash, then as the failure it caused
                    safely(() -> options.listener().onEvent(new ResumeEvent.Crashed(key.name(), key.id(), a.attempts(),
                            options.maxAttempts(), a.error())));
                    safely(() -> options.listener().onEvent(
                            new ResumeEvent.MarkedFailed(key.name(), key.id(), a.attempts(), a.error())));
                }
                // failed counts what this pass marked failed (its last crash), as the seed does; a run that
                // found the instance already failed (another worker marked it) was only resumed, or
                // every worker that ran into it would count the one failure again
                int marked = a.error() != null ? 1 : 0;
                yield new ResumeSummary(0, 1, 0, 0, 0, marked, 0, marked, 0, 0);
            }
            case CRASHED -> {
                safely(() -> options.listener().onEvent(new ResumeEvent.Crashed(key.name(), key.id(), a.attempts(),
                        options.maxAttempts(), a.error())));
                yield new ResumeSummary(0, 1, 0, 0, 0, 0, 0, 1, 0, 0);
            }
            case TRANSIENT -> {
                safely(() -> options.listener().onEvent(new ResumeEvent.TransientError(key.name(), key.id(), a.error())));
                yield new ResumeSummary(0, 1, 0, 0, 0, 0, 0, 0, 1, 0);
            }
            case LEASE_LOST -> new ResumeSummary(0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
            case INTERRUPTED -> ResumeSummary.EMPTY;
        };
    }

    /**
     * Starts the loop on a thread of its own: a pass, then a wait of the poll interval; with
     * {@link ResumeOptions#push()} the wait ends early whenever the store's wake signal fires: after
     * any append through the store handle (a wake, a completion, a start, an application event), on
     * NOTIFY of another handle's append, and on the store's fallback tick, so a woken workflow
     * resumes within milliseconds and an idle worker passes at least once per fallback tick (see
     * {@link ResumeOptions#pollInterval()}). A pass that filled its batch is followed by the next at once.
     */
    public synchronized ResumeWorker start() {
        if (loop != null) {
            throw new IllegalStateException("resume worker " + owner() + " already started");
        }
        if (closing) {
            throw new IllegalStateException("resume worker " + owner() + " is closed");
        }
        running = true;
        WakeSignal wake = options.push() ? store.wakeSignal() : null;
        loop = Thread.ofPlatform().name("waymark-resume-loop-" + owner()).daemon().start(() -> runLoop(wake));
        return this;
    }

    private void runLoop(WakeSignal wake) {
        while (running) {
            long seen = wake == null ? 0 : wake.generation();
            ResumeSummary summary = ResumeSummary.EMPTY;
            passing = true;
            try {
                if (!closing) {
                    summary = resumeOnce();
                }
            } catch (RuntimeException | Error e) {
                // an Error too (a StackOverflowError, an OutOfMemoryError that freed its memory):
                // this loop is what resumes the process's workflows, so it reports and goes on
                passFailed(e);
            } finally {
                passing = false;
            }
            if (!running) {
                return;
            }
            if (summary.discovered() >= options.batchLimit() && summary.resumed() > 0) {
                continue; // more work than one pass takes
            }
            try {
                if (wake != null) {
                    wake.awaitAfter(seen, options.pollInterval());
                } else {
                    waitStopped(options.pollInterval());
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void waitStopped(Duration d) throws InterruptedException {
        lock.lock();
        try {
            if (running) {
                stopped.await(d.toNanos(), TimeUnit.NANOSECONDS);
            }
        } finally {
            lock.unlock();
        }
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
        lock.lock();
        try {
            stopped.signalAll();
        } finally {
            lock.unlock();
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
                org.slf4j.LoggerFactory.getLogger(ResumeWorker.class)
                        .warn("waymark resume: attempts still running after 30 s; their leases expire by themselves");
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        keeper.close();
    }

    /** Reports a failed pass; whatever the listener throws, the loop goes on. */
    private void passFailed(Throwable e) {
        try {
            options.listener().onEvent(new ResumeEvent.PassFailed(e));
        } catch (RuntimeException | Error listenerFailure) {
            e.addSuppressed(listenerFailure);
            org.slf4j.LoggerFactory.getLogger(ResumeWorker.class).error("waymark resume: pass failed", e);
        }
    }

    private void safely(Runnable r) {
        runtime.safely(r); // the engine's one guard around listener calls
    }
}
