package dev.waymark.workflow.internal;

import dev.waymark.workflow.backpressure.Backpressure;
import dev.waymark.workflow.backpressure.WorkflowBacklog;
import dev.waymark.workflow.backpressure.WorkflowBackpressureException;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.WorkflowRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runs an engine executes in its own process, and the hooks its client calls: a started
 * workflow leased to the engine runs here at once on a virtual thread; so do a child spawned by a
 * local run, a parent whose local child ended, and a workflow whose awakeable this process settled.
 * Also the engine's backpressure on starts and its backlog sampler.
 */
public final class InProcessRuns implements ClientHooks {

    private static final Logger log = LoggerFactory.getLogger(InProcessRuns.class);

    private final EngineRuntime runtime;
    private final Instances instances;
    private final WorkflowRegistry registry;
    private final LeaseKeeper keeper;
    private final Advancer advancer;
    private final Advancer.Policy policy;
    private final boolean runOnStart;
    private final ExecutorService runs;
    private final Map<Instances.Key, Instances.Key> localParents = new ConcurrentHashMap<>();
    private final LocalRuns local = new LocalRuns();
    /** Attempts running in this process: the engine's own runs and its workers' attempts. */
    private final AtomicLong inFlight = new AtomicLong();
    private final BacklogSampler backlog;
    private final HeldWaits holds;
    private final Backpressure backpressure;
    private final Duration sampleInterval;
    /** Cancels the live children of a cancelled instance (the client's cascade). */
    private volatile BiConsumer<String, String> cancelLiveChildren = (name, id) -> {};
    private volatile boolean closed;

    /** Runs of {@code registry}'s workflows leased by {@code keeper}, crash-retried by {@code policy}. */
    public InProcessRuns(EngineRuntime runtime, WorkflowRegistry registry, LeaseKeeper keeper, Advancer.Policy policy,
            boolean runOnStart, Backpressure backpressure, Duration sampleInterval, HeldWaits holds) {
        this.runtime = runtime;
        this.instances = runtime.instances();
        this.registry = registry;
        this.keeper = keeper;
        this.holds = holds;
        this.advancer = new Advancer(runtime, false, holds);
        runtime.cancels().onCancelled(holds::poke);
        this.policy = policy;
        this.runOnStart = runOnStart;
        this.backpressure = backpressure;
        this.sampleInterval = sampleInterval;
        this.backlog = new BacklogSampler(instances.queries(), sampleInterval, inFlight::get);
        this.runs = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("waymark-workflow-", 0).factory());
    }

    /** Sets how a cancelled run's live children are cancelled (the engine's client's cascade). */
    public void cancelChildrenWith(BiConsumer<String, String> cascade) {
        this.cancelLiveChildren = cascade;
    }

    /** The backlog sampler shared with the engine's resume workers. */
    public BacklogSampler backlog() {
        return backlog;
    }

    /** Attempts in flight in the process, for the backlog (the resume workers count theirs here too). */
    public AtomicLong inFlight() {
        return inFlight;
    }

    @Override
    public void admitStart(String name, String id) {
        if (!(backpressure instanceof Backpressure.MaxBacklog bound)) {
            return;
        }
        Deadline deadline = Deadline.after(bound.maxWait());
        while (!backlog.tryAdmit(bound)) {
            if (deadline.remainingNanos() <= 0) {
                WorkflowBacklog b = backlog.current();
                throw new WorkflowBackpressureException("start of workflow " + name + "/" + id + " refused after "
                        + bound.maxWait().toMillis() + " ms: backlog " + b.total() + " (bound " + bound.maxBacklog()
                        + "; " + b.runnable() + " runnable, " + b.sleeping() + " sleeping), " + b.waiting()
                        + " waiting for a worker, the oldest for "
                        + b.oldestWaiting().toMillis() + " ms", b);
            }
            try {
                pause(deadline);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new WorkflowBackpressureException("start of workflow " + name + "/" + id
                        + " interrupted while waiting for the backlog to fall below " + bound.maxBacklog(),
                        backlog.current());
            }
        }
    }

    /** Waits until the backlog is within {@code bound}, for up to its wait; true if it is. */
    public boolean awaitCapacity(Backpressure.MaxBacklog bound) throws InterruptedException {
        Deadline deadline = Deadline.after(bound.maxWait());
        while (!backlog.current().within(bound)) {
            if (deadline.remainingNanos() <= 0) {
                return false;
            }
            pause(deadline);
        }
        return true;
    }

    /** Waits one sample interval (less if the deadline is nearer): the next sample may admit more. */
    private void pause(Deadline deadline) throws InterruptedException {
        long nanos = Math.min(deadline.remainingNanos(), sampleInterval.toNanos());
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    }

    /**
     * Runs one leased attempt of {@code key} in the calling thread if it is claimable now; false if
     * it was not.
     */
    public boolean runNow(Instances.Key key) {
        Optional<Leases.Claim> claim = instances.leases().claim(key.name(), key.id(), keeper.owner(), keeper.ttl());
        if (claim.isEmpty()) {
            return false;
        }
        advanced(key, advancer.advance(key, claim.get().epoch(), keeper, policy, null), false);
        return true;
    }

    @Override
    public void checkRunnable(String name) {
        registry.require(name);
    }

    @Override
    public void checkInput(String name, String id, String json) {
        runtime.checkInput(name, id, json);
    }

    @Override
    public String startOwner() {
        return runOnStart && !closed ? keeper.owner() : null;
    }

    @Override
    public Duration leaseTtl() {
        return keeper.ttl();
    }

    @Override
    public void afterStart(Instances.Key key, Instances.Started started, String input) {
        if (started.epoch() > 0) {
            submit(key, started.epoch(), input);
        }
    }

    @Override
    public void afterWake(Instances.Key key) {
        if (!holds.poke(key)) { // a run here that waits in memory holds the lease: it goes on itself
            tryRun(key);
        }
    }

    /** The runs that wait in memory. */
    public HeldWaits holds() {
        return holds;
    }

    @Override
    public CompletableFuture<WorkflowOutcome<?>> watch(Instances.Key key) {
        return local.watch(key);
    }

    @Override
    public void unwatch(Instances.Key key, CompletableFuture<WorkflowOutcome<?>> watcher) {
        local.unwatch(key, watcher);
    }

    @Override
    public boolean runsHere(Instances.Key key) {
        return local.isUnderWay(key);
    }

    /** A local run spawned {@code child}; it runs here at once when it was leased to this engine. */
    public void childSpawned(Instances.Key parent, Instances.Key child, Instances.Started started) {
        if (started.epoch() > 0) {
            localParents.put(child, parent);
            submit(child, started.epoch(), null);
        }
    }

    private void tryRun(Instances.Key key) {
        if (closed || registry.find(key.name()).isEmpty()) {
            return;
        }
        try {
            instances.leases().claim(key.name(), key.id(), keeper.owner(), keeper.ttl())
                    .ifPresent(c -> submit(key, c.epoch(), null));
        } catch (RuntimeException e) {
            log.debug("waymark workflow: local claim of {}/{} failed; a resume worker will pick it up", key.name(),
                    key.id(), e);
        }
    }

    private void submit(Instances.Key key, long epoch, String freshInput) {
        local.submitted(key);
        inFlight.incrementAndGet();
        try {
            runs.execute(() -> {
                try {
                    advanced(key, advancer.advance(key, epoch, keeper, policy, freshInput), true);
                } finally {
                    inFlight.decrementAndGet();
                }
            });
        } catch (RejectedExecutionException e) {
            inFlight.decrementAndGet();
            local.ended(key, null);
            // closing: the lease expires (or is released below) and a resume worker takes over
            instances.leases().release(key.name(), key.id(), keeper.owner(), epoch, false);
        }
    }

    /**
     * How an attempt of {@code key} ended, from a run here ({@code submittedHere}) or a resume
     * worker's: completes in-process waits, runs a parent whose local child ended, finishes a
     * cancellation cascade.
     */
    public void advanced(Instances.Key key, Advancer.Advance advance, boolean submittedHere) {
        if (submittedHere) {
            local.ended(key, advance.outcome()); // before a re-run below marks it under way again
        } else {
            local.notifyEnd(key, advance.outcome());
        }
        if (advance.wokenMeanwhile()) {
            tryRun(key);
        }
        if (advance.result() == Advancer.Result.CANCELLED) {
            cascadeCancel(key);
        }
        switch (advance.result()) {
            case COMPLETED, FAILED, CANCELLED -> {
                Instances.Key parent = localParents.remove(key);
                if (parent != null) {
                    tryRun(parent);
                }
            }
            default -> {
            }
        }
    }

    /**
     * A run found its instance cancelled: its live children are walked again here, which finishes a
     * cascade the cancelling process did not (it died after committing the cancellation). Since
     * schema V14 no child is created once its parent is cancelled, so this only repairs.
     */
    private void cascadeCancel(Instances.Key key) {
        try {
            cancelLiveChildren.accept(key.name(), key.id());
        } catch (RuntimeException e) {
            log.warn("waymark workflow: cancelling the children of cancelled {}/{} failed; cancelling it again"
                    + " repairs this: {}", key.name(), key.id(), e.toString());
        }
    }

    /** Takes no more work: starts are no longer leased here and the executor refuses new runs. */
    public void stopTaking() {
        closed = true;
        holds.close(); // the runs waiting in memory leave their waits to the database and end
        runs.shutdown();
    }

    /**
     * Waits until {@code deadline} for the runs under way, then interrupts the rest and waits up to
     * {@link StopOnce#FORCED_STOP_WAIT} more for them to unwind. Answers whether every run had ended.
     *
     * @throws InterruptedException if the caller is interrupted meanwhile (the runs are interrupted
     *     first)
     */
    public boolean awaitRuns(Deadline deadline) throws InterruptedException {
        try {
            if (runs.awaitTermination(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                return true;
            }
            runs.shutdownNow();
            if (runs.awaitTermination(StopOnce.FORCED_STOP_WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                return true;
            }
            log.warn("waymark workflow: some runs did not stop; their leases expire by themselves");
            return false;
        } catch (InterruptedException e) {
            runs.shutdownNow();
            throw e;
        }
    }

    /** Waits up to {@code nanos} for every run to have ended (after {@link #stopTaking}); true if they have. */
    public boolean awaitEnded(long nanos) throws InterruptedException {
        return runs.awaitTermination(nanos, TimeUnit.NANOSECONDS);
    }
}
