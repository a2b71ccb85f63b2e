package dev.waymark.workflow;

import dev.waymark.core.RetryPolicy;
import dev.waymark.core.Stoppable;
import dev.waymark.store.BroadcastRegistration;
import dev.waymark.store.EventStore;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.backpressure.Backpressure;
import dev.waymark.workflow.backpressure.WorkflowBacklog;
import dev.waymark.workflow.backpressure.WorkflowBackpressureException;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.UnknownWorkflowException;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.exception.WorkflowException;
import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.gc.FinishedWorkflow;
import dev.waymark.workflow.internal.Args;
import dev.waymark.workflow.internal.Cancellation;
import dev.waymark.workflow.internal.EngineShutdown;
import dev.waymark.workflow.internal.EngineRuntime;
import dev.waymark.workflow.internal.InProcessRuns;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.LeaseKeeper;
import dev.waymark.workflow.internal.ResumeParts;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.resume.internal.ResumeLoop;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.RetryOutcome;
import dev.waymark.workflow.status.WorkflowDetails;
import dev.waymark.workflow.status.WorkflowInfo;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs workflows in this process. A started workflow is leased to this engine and run at once on a
 * virtual thread; a child spawned by a local run, a parent whose local child ended, and a workflow
 * whose awakeable this engine settled are run here too. Everything else (crash recovery, sleeps that
 * come due, wakes from other processes) is found by a {@link ResumeWorker}, which
 * {@link #resumeWorker} creates and the application starts beside the engine.
 *
 * <p>An engine does everything a {@link WorkflowClient} does: {@link #client()} is the client it
 * composes (pass it where only a client is needed), and the client's methods are here too
 * ({@link #start}, {@link #cancel}, {@link #list}...), each delegating to it.
 *
 * <p>The engine is {@link Stoppable}: {@link #stop(Duration)} stops taking work, lets the running
 * attempts (its own runs and its resume workers') finish for up to the timeout, then interrupts the
 * rest (an interrupted attempt records nothing and its lease is released), and answers whether
 * everything had ended; {@link #close()} is {@code stop(}{@link WorkflowEngineBuilder#shutdownTimeout
 * shutdownTimeout}{@code )}.
 */
public final class WorkflowEngine implements Stoppable {

    private static final Logger log = LoggerFactory.getLogger(WorkflowEngine.class);

    /**
     * The default lease of a running instance, whoever runs it: this engine's own runs
     * ({@link WorkflowEngineBuilder#leaseTtl}) and the instances a resume worker claims
     * ({@link ResumeOptions#leaseTtl()}). A crashed process's instances are taken over about this
     * long after its last renewal, whichever of them ran them.
     */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(30);

    /**
     * The default crash retry of a workflow, whoever runs it ({@link WorkflowEngineBuilder#retry}, {@link ResumeOptions#retry()}):
     * 5 attempts, the n-th crash followed by 2 s doubling up to 64 s.
     */
    public static final RetryPolicy DEFAULT_RETRY = RetryPolicy.exponential(5, Duration.ofSeconds(2),
            Duration.ofSeconds(64));

    /**
     * The default of {@link WorkflowEngineBuilder#backlogSampleInterval}: the runnable backlog is read from the
     * database at most this often by an engine, its resume workers and their metrics together.
     */
    public static final Duration DEFAULT_BACKLOG_SAMPLE_INTERVAL = Duration.ofMillis(100);

    /** Most journal entries one group-commit transaction holds (see {@link WorkflowEngineBuilder#groupCommit}). */
    public static final int MAX_STEP_BATCH = 64;
    /** Group-commit transactions in flight at once: one commits while the next gathers. */
    private static final int STEP_FLUSHERS = 2;

    private final WorkflowClient client;
    private final WorkflowRegistry registry;
    private final LeaseKeeper keeper;
    private final EngineRuntime runtime;
    private final EventStore store;
    private final InProcessRuns local;
    /** Stops group commit of steps; a no-op when it is off. */
    private final AutoCloseable stepBatching;
    private final Duration shutdownTimeout;
    private final Backpressure backpressure;
    private final List<ResumeWorker> workers = new CopyOnWriteArrayList<>();
    /** Hears cancellations announced by any process (see {@link WorkflowClient#cancel}). */
    private final BroadcastRegistration cancelNotices;
    /** Stops the runs, the workers, then what serves them. */
    private final EngineShutdown shutdown;

    WorkflowEngine(EventStore store, EngineRuntime runtime, int maxPayloadBytes, WorkflowRegistry registry,
            LeaseKeeper keeper, InProcessRuns local, Backpressure backpressure, Duration shutdownTimeout,
            boolean groupCommit) {
        this.store = store;
        this.runtime = runtime;
        this.registry = registry;
        this.keeper = keeper;
        this.local = local;
        this.shutdownTimeout = shutdownTimeout;
        this.backpressure = backpressure;
        this.client = new WorkflowClient(store, runtime, maxPayloadBytes, local);
        local.cancelChildrenWith(client::cancelLiveChildren);
        this.stepBatching = groupCommit
                ? runtime.instances().batchSteps(STEP_FLUSHERS, MAX_STEP_BATCH, "waymark-" + keeper.owner())
                : () -> {};
        this.cancelNotices = Cancellation.hear(store, runtime.cancels());
        this.shutdown = new EngineShutdown(local, workers, () -> {
            cancelNotices.close();
            closeStepBatching();
            keeper.close();
        });
    }

    /**
     * A builder over {@code store} running the workflows of {@code registry}.
     *
     * @throws InvalidWorkflowInputException if {@code store} or {@code registry} is null
     */
    public static WorkflowEngineBuilder builder(EventStore store, WorkflowRegistry registry) {
        return new WorkflowEngineBuilder(store, registry);
    }

    /**
     * The client this engine composes: what it starts runs here at once, and what it wakes by
     * settling an awakeable too. Pass it where only a client is needed.
     */
    public WorkflowClient client() {
        return client;
    }

    /**
     * Starts workflow {@code name} with {@code id}, as {@link WorkflowClient#start}; leased to this
     * engine and run here at once unless {@link WorkflowEngineBuilder#runOnStart} is off. With
     * {@link WorkflowEngineBuilder#backpressure}, waits for the backlog first.
     *
     * @throws UnknownWorkflowException if this engine's registry lacks {@code name}
     * @throws WorkflowBackpressureException if the backlog stays above the bound for its wait
     * @see WorkflowClient#start
     */
    public <R> WorkflowHandle<R> start(String name, String id, Object input, Class<R> resultType) {
        return client.start(name, id, input, resultType);
    }

    /** A handle to instance {@code name}/{@code id}, as {@link WorkflowClient#handle}. */
    public <R> WorkflowHandle<R> handle(String name, String id, Class<R> resultType) {
        return client.handle(name, id, resultType);
    }

    /** Cancels a workflow, as {@link WorkflowClient#cancel}. */
    public CancelOutcome cancel(String name, String id) {
        return client.cancel(name, id);
    }

    /** Completes an awakeable, as {@link WorkflowClient#completeAwakeable}; a woken workflow runs here. */
    public AwakeableOutcome completeAwakeable(UUID awakeable, Object value) {
        return client.completeAwakeable(awakeable, value);
    }

    /** Fails an awakeable, as {@link WorkflowClient#failAwakeable}; a woken workflow runs here. */
    public AwakeableOutcome failAwakeable(UUID awakeable, String reason) {
        return client.failAwakeable(awakeable, reason);
    }

    /** Cancels an awakeable, as {@link WorkflowClient#cancelAwakeable}; a woken workflow runs here. */
    public AwakeableOutcome cancelAwakeable(UUID awakeable) {
        return client.cancelAwakeable(awakeable);
    }

    /** Revives a failed workflow, as {@link WorkflowClient#retry}. */
    public RetryOutcome retry(String name, String id) {
        return client.retry(name, id);
    }

    /** A page of instances, as {@link WorkflowClient#list}. */
    public List<WorkflowInfo> list(WorkflowQuery query) {
        return client.list(query);
    }

    /** An instance with its journal, awakeables and children, as {@link WorkflowClient#describe}. */
    public Optional<WorkflowDetails> describe(String name, String id) {
        return client.describe(name, id);
    }

    /** Finished instances a collection would delete now, as {@link WorkflowClient#collectable}. */
    public List<FinishedWorkflow> collectable(Duration retention, int limit) {
        return client.collectable(retention, limit);
    }

    /** One garbage-collection pass, as {@link WorkflowClient#collect}. */
    public CollectResult collect(Duration retention, int limit) {
        return client.collect(retention, limit);
    }

    /** One awakeable by id, as {@link WorkflowClient#awakeable}. */
    public Optional<AwakeableInfo> awakeable(UUID awakeable) {
        return client.awakeable(awakeable);
    }

    /** The event store the journals live in. */
    public EventStore store() {
        return client.store();
    }

    /** The registry this engine runs. */
    public WorkflowRegistry registry() {
        return registry;
    }

    /** The owner id this engine writes into the leases it holds. */
    public String owner() {
        return keeper.owner();
    }

    /**
     * A resume worker over this engine's registry, store and codec; start it with
     * {@link ResumeWorker#start()}. Stopping or closing the engine stops it too.
     *
     * @throws InvalidWorkflowInputException if {@code options} is null
     */
    public ResumeWorker resumeWorker(ResumeOptions options) {
        Args.notNull(options, "options");
        ResumeWorker worker = new ResumeLoop(new ResumeParts(runtime, registry, store,
                (k, a) -> local.advanced(k, a, false), (name, id) -> client.cancel(name, id) == CancelOutcome.CANCELLED,
                local.backlog(), local.inFlight()), options);
        workers.add(worker);
        return worker;
    }

    /**
     * The runnable backlog of this engine's schema (see {@link WorkflowBacklog}), sampled from the
     * database at most {@link WorkflowEngineBuilder#backlogSampleInterval} ago (shared with this
     * engine's resume workers and backpressure).
     *
     * @throws dev.waymark.store.StoreException if the first sample cannot be read
     */
    public WorkflowBacklog backlog() {
        return local.backlog().current();
    }

    /**
     * How many runs of this engine wait in memory now for a sleep or an awakeable (see
     * {@link WorkflowEngineBuilder#holdWaits}); each is also counted as suspended in the database.
     */
    public int heldWaits() {
        return local.holds().held();
    }

    /** The backpressure {@code start} applies (see {@link WorkflowEngineBuilder#backpressure}). */
    public Backpressure backpressure() {
        return backpressure;
    }

    /**
     * The health signal of intake: whether the last backlog sample is within this engine's
     * backpressure bound (always true with {@link Backpressure#off()}), i.e. whether {@code start}
     * would proceed without waiting now.
     */
    public boolean acceptsStarts() {
        return local.backlog().current().within(backpressure);
    }

    /**
     * Waits until the backlog ({@link WorkflowBacklog#total()}) is below {@code maxBacklog}, for up to
     * {@code timeout}; true if it is. The piece for applying backpressure by hand (before starting a batch, or in a handler that
     * starts workflows through a {@link WorkflowClient}); an engine with {@link WorkflowEngineBuilder#backpressure}
     * does this inside {@code start}.
     *
     * @throws WorkflowConfigException if {@code maxBacklog} is below 1 or {@code timeout} is null
     *     or negative
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public boolean awaitCapacity(long maxBacklog, Duration timeout) throws InterruptedException {
        return local.awaitCapacity(new Backpressure.MaxBacklog(maxBacklog, timeout));
    }

    /**
     * Runs one leased attempt of {@code name}/{@code id} in the calling thread if it is claimable now
     * (running, or suspended with a due wake time, with no live lease and no crash backoff). Returns
     * false if it was not claimable. Mostly for tests and tools; the resume worker does this in bulk.
     *
     * @throws UnknownWorkflowException if this engine's registry lacks {@code name}; the instance is
     *     not claimed and no attempt is counted
     * @throws InvalidWorkflowInputException for an invalid name or id
     * @throws dev.waymark.store.StoreException if claiming it fails (see {@link WorkflowException});
     *     a store failure during the attempt itself is handled as by a resume worker, not thrown
     */
    public boolean runNow(String name, String id) {
        Instances.Key key = new Instances.Key(WorkflowNames.requireName(name), WorkflowNames.requireId(id));
        // before claiming: an attempt without a body would count as a crash toward failing the instance
        registry.require(name);
        return local.runNow(key);
    }

    /**
     * Stops taking work and stops the resume workers made by {@link #resumeWorker}: the runs this
     * engine started and the attempts its workers have in flight get up to {@code timeout} (one
     * deadline for all) to finish; those still running then are interrupted (an interrupted attempt
     * records nothing; its step in flight runs again on the next attempt; its lease is released) and
     * get up to 10 s more to unwind. Answers whether every run and every worker had stopped: false
     * means an attempt ignores its interrupt and goes on in the background (its lease then expires
     * by itself). A second or concurrent call starts no second stop: it waits, within its own
     * timeout, for the first to answer and then for what the first left running to end. An
     * interrupt of the caller ends the wait at once (the attempts are interrupted), keeping the
     * interrupt flag.
     *
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    @Override
    public boolean stop(Duration timeout) {
        return shutdown.stop(timeout);
    }

    /** {@link #stop(Duration)} with the builder's {@link WorkflowEngineBuilder#shutdownTimeout} (10 s by default). */
    @Override
    public void close() {
        stop(shutdownTimeout);
    }

    private void closeStepBatching() {
        try {
            stepBatching.close();
        } catch (Exception e) {
            log.warn("waymark workflow: stopping group commit failed", e);
        }
    }
}
