package dev.waymark.workflow;

import dev.waymark.store.internal.TransactionBounds;
import dev.waymark.store.BroadcastRegistration;
import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.workflow.internal.Advancer;
import dev.waymark.workflow.internal.Args;
import dev.waymark.workflow.internal.BacklogSampler;
import dev.waymark.workflow.internal.Deadline;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.LeaseKeeper;
import dev.waymark.workflow.internal.Leases;
import dev.waymark.workflow.internal.LocalRuns;
import dev.waymark.workflow.internal.ResumeWorkers;
import dev.waymark.workflow.internal.Runtime;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs workflows in this process. A started workflow is leased to this engine and run at once on a
 * virtual thread; a child spawned by a local run, a parent whose local child ended, and a workflow
 * whose awakeable this engine settled are run here too. Everything else (crash recovery, sleeps that
 * come due, wakes from other processes) is found by a {@link ResumeWorker}, which
 * {@link #resumeWorker} creates and the application starts beside the engine.
 *
 * <p>Closing the engine stops taking work, lets running attempts finish for the shutdown timeout,
 * then interrupts the rest; an interrupted attempt records nothing and its lease is released.
 */
public final class WorkflowEngine extends WorkflowClient implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WorkflowEngine.class);

    /**
     * The default lease of a running instance, whoever runs it: this engine's own runs
     * ({@link Builder#leaseTtl}) and the instances a resume worker claims
     * ({@link ResumeOptions#leaseTtl()}). A crashed process's instances are taken over about this
     * long after its last renewal, whichever of them ran them.
     */
    public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(30);

    /**
     * The default of {@link Builder#backlogSampleInterval}: the runnable backlog is read from the
     * database at most this often by an engine, its resume workers and their metrics together.
     */
    public static final Duration DEFAULT_BACKLOG_SAMPLE_INTERVAL = Duration.ofMillis(100);

    /** Most journal entries one group-commit transaction holds (see {@link Builder#groupCommit}). */
    public static final int MAX_STEP_BATCH = 64;
    /** Group-commit transactions in flight at once: one commits while the next gathers. */
    private static final int STEP_FLUSHERS = 2;

    private final WorkflowRegistry registry;
    private final LeaseKeeper keeper;
    /** Stops group commit of steps; a no-op when it is off. */
    private final AutoCloseable stepBatching;
    private final Advancer advancer;
    private final Advancer.Policy policy;
    private final boolean runOnStart;
    private final Duration shutdownTimeout;
    private final ExecutorService runs;
    private final Map<Instances.Key, Instances.Key> localParents = new ConcurrentHashMap<>();
    private final LocalRuns local = new LocalRuns();
    private final List<ResumeWorker> workers = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Hears cancellations announced by any process (see {@link WorkflowClient#cancel}). */
    private final BroadcastRegistration cancelNotices;
    /** Attempts running in this process: the engine's own runs and its workers' attempts. */
    private final java.util.concurrent.atomic.AtomicLong inFlight = new java.util.concurrent.atomic.AtomicLong();
    private final BacklogSampler backlog;
    private final Backpressure backpressure;
    private final Duration sampleInterval;
    private volatile boolean closed;

    private WorkflowEngine(EventStore store, Runtime runtime, int maxPayloadBytes, WorkflowRegistry registry,
            LeaseKeeper keeper, Advancer.Policy policy, boolean runOnStart, Duration shutdownTimeout,
            boolean groupCommit, Backpressure backpressure, Duration backlogSampleInterval) {
        super(store, runtime, maxPayloadBytes);
        this.backpressure = backpressure;
        this.sampleInterval = backlogSampleInterval;
        this.backlog = new BacklogSampler(runtime.instances().queries(), backlogSampleInterval, inFlight::get);
        this.registry = registry;
        this.keeper = keeper;
        this.stepBatching = groupCommit
                ? runtime.instances().batchSteps(STEP_FLUSHERS, MAX_STEP_BATCH, "waymark-" + keeper.owner())
                : () -> {};
        this.advancer = new Advancer(runtime);
        this.policy = policy;
        this.runOnStart = runOnStart;
        this.shutdownTimeout = shutdownTimeout;
        this.runs = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("waymark-workflow-", 0).factory());
        this.cancelNotices = StoreInternals.of(store).onBroadcast(CANCEL_TOPIC, message -> {
            int slash = message.indexOf('/'); // a workflow name has no '/'
            if (slash > 0) {
                runtime.cancels().cancelled(new Instances.Key(message.substring(0, slash), message.substring(slash + 1)));
            }
        });
    }

    /**
     * A builder over {@code store} running the workflows of {@code registry}.
     *
     * @throws InvalidWorkflowInputException if {@code store} or {@code registry} is null
     */
    public static Builder builder(EventStore store, WorkflowRegistry registry) {
        return new Builder(store, registry);
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
     * {@link ResumeWorker#start()}. Closing the engine closes it too.
     *
     * @throws InvalidWorkflowInputException if {@code options} is null
     */
    public ResumeWorker resumeWorker(ResumeOptions options) {
        Args.notNull(options, "options");
        ResumeWorker worker = ResumeWorkers.create(new ResumeWorkers.Parts(runtime, registry, store,
                (k, a) -> advanced(k, a, false), (name, id) -> cancel(name, id) == CancelOutcome.CANCELLED, backlog,
                inFlight), options);
        workers.add(worker);
        return worker;
    }

    /**
     * The runnable backlog of this engine's schema (see {@link WorkflowBacklog}), sampled from the
     * database at most {@link Builder#backlogSampleInterval} ago (shared with this engine's resume
     * workers and backpressure).
     *
     * @throws dev.waymark.store.StoreException if the first sample cannot be read
     */
    public WorkflowBacklog backlog() {
        return backlog.current();
    }

    /** The backpressure {@code start} applies (see {@link Builder#backpressure}). */
    public Backpressure backpressure() {
        return backpressure;
    }

    /**
     * The health signal of intake: whether the last backlog sample is within this engine's
     * backpressure bound (always true with {@link Backpressure#off()}), i.e. whether {@code start}
     * would proceed without waiting now.
     */
    public boolean acceptsStarts() {
        return backlog.current().within(backpressure);
    }

    /**
     * Waits until the backlog ({@link WorkflowBacklog#total()}) is below {@code maxBacklog}, for up to
     * {@code timeout}; true if it is. The piece for applying backpressure by hand (before starting a batch, or in a handler that
     * starts workflows through a {@link WorkflowClient}); an engine with {@link Builder#backpressure}
     * does this inside {@code start}.
     *
     * @throws WorkflowConfigException if {@code maxBacklog} is below 1 or {@code timeout} is null
     *     or negative
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public boolean awaitCapacity(long maxBacklog, Duration timeout) throws InterruptedException {
        Backpressure.MaxBacklog bound = new Backpressure.MaxBacklog(maxBacklog, timeout);
        Deadline deadline = Deadline.after(timeout);
        while (!backlog.current().within(bound)) {
            if (deadline.remainingNanos() <= 0) {
                return false;
            }
            pause(deadline);
        }
        return true;
    }

    @Override
    void admitStart(String name, String id) {
        if (!(backpressure instanceof Backpressure.MaxBacklog bound)) {
            return;
        }
        Deadline deadline = Deadline.after(bound.maxWait());
        while (!backlog.tryAdmit(bound)) {
            if (deadline.remainingNanos() <= 0) {
                WorkflowBacklog b = backlog.current();
                throw new WorkflowBackpressureException("start of workflow " + name + "/" + id + " refused after "
                        + bound.maxWait().toMillis() + " ms: backlog " + b.total() + " (bound " + bound.maxBacklog()
                        + "; " + b.runnable() + " runnable, " + b.sleeping() + " sleeping), " + b.waiting() + " waiting for a worker, the oldest for "
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

    /** Waits one sample interval (less if the deadline is nearer): the next sample may admit more. */
    private void pause(Deadline deadline) throws InterruptedException {
        long nanos = Math.min(deadline.remainingNanos(), backlogSampleNanos());
        if (nanos > 0) {
            TimeUnit.NANOSECONDS.sleep(nanos);
        }
    }

    private long backlogSampleNanos() {
        return sampleInterval.toNanos();
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
        Optional<Leases.Claim> claim = instances.leases().claim(key.name(), key.id(), keeper.owner(), keeper.ttl());
        if (claim.isEmpty()) {
            return false;
        }
        advanced(key, advancer.advance(key, claim.get().epoch(), keeper, policy, null), false);
        return true;
    }

    @Override
    void checkRunnable(String name) {
        registry.require(name);
    }

    @Override
    void checkInput(String name, String id, String json) {
        runtime.checkInput(name, id, json);
    }

    @Override
    String startOwner() {
        return runOnStart && !closed ? keeper.owner() : null;
    }

    @Override
    Duration leaseTtl() {
        return keeper.ttl();
    }

    @Override
    void afterStart(Instances.Key key, Instances.Started started, String input) {
        if (started.epoch() > 0) {
            submit(key, started.epoch(), input);
        }
    }

    @Override
    void afterWake(Instances.Key key) {
        tryRun(key);
    }

    @Override
    CompletableFuture<WorkflowOutcome<?>> watch(Instances.Key key) {
        return local.watch(key);
    }

    @Override
    void unwatch(Instances.Key key, CompletableFuture<WorkflowOutcome<?>> watcher) {
        local.unwatch(key, watcher);
    }

    @Override
    boolean runsHere(Instances.Key key) {
        return local.isUnderWay(key);
    }

    void childSpawned(Instances.Key parent, Instances.Key child, Instances.Started started) {
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
        } catch (java.util.concurrent.RejectedExecutionException e) {
            inFlight.decrementAndGet();
            local.ended(key, null);
            // closing: the lease expires (or is released below) and a resume worker takes over
            instances.leases().release(key.name(), key.id(), keeper.owner(), epoch, false);
        }
    }

    private void advanced(Instances.Key key, Advancer.Advance advance, boolean submittedHere) {
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
            default -> { }
        }
    }

    /**
     * A run found its instance cancelled: its live children are walked again here, which finishes a
     * cascade the cancelling process did not (it died after committing the cancellation). Since
     * schema V14 no child is created once its parent is cancelled, so this only repairs.
     */
    private void cascadeCancel(Instances.Key key) {
        try {
            cancelLiveChildren(key.name(), key.id());
        } catch (RuntimeException e) {
            log.warn("waymark workflow: cancelling the children of cancelled {}/{} failed; cancelling it again"
                    + " repairs this: {}", key.name(), key.id(), e.toString());
        }
    }

    /**
     * Stops taking work and closes the resume workers made by {@link #resumeWorker}: the runs this
     * engine started and the attempts its workers have in flight get the shutdown timeout (one
     * deadline for all) to finish, then are interrupted (an interrupted attempt records nothing; its
     * step in flight runs again on the next attempt; its lease is released).
     */
    @Override
    public void close() {
        closed = true;
        Deadline deadline = Deadline.after(shutdownTimeout);
        runs.shutdown(); // the engine's own runs and the workers' attempts drain side by side
        List<Thread> closers = new ArrayList<>();
        for (ResumeWorker worker : workers) {
            Duration grace = deadline.remaining();
            closers.add(Thread.ofPlatform().daemon().name("waymark-resume-close").start(() -> worker.close(grace)));
        }
        boolean interrupted = false;
        try {
            if (!runs.awaitTermination(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                runs.shutdownNow();
                if (!runs.awaitTermination(10, TimeUnit.SECONDS)) {
                    log.warn("waymark workflow: some runs did not stop; their leases expire by themselves");
                }
            }
        } catch (InterruptedException e) {
            interrupted = true;
            runs.shutdownNow();
        }
        if (interrupted) {
            closers.forEach(Thread::interrupt); // the workers interrupt their attempts at once
        }
        for (Thread closer : closers) {
            // a closer ends within its attempts' unwinding once interrupted
            while (!Deadline.joined(closer, Long.MAX_VALUE)) {
                interrupted = true;
                closers.forEach(Thread::interrupt);
            }
        }
        cancelNotices.close();
        closeStepBatching();
        keeper.close();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void closeStepBatching() {
        try {
            stepBatching.close();
        } catch (Exception e) {
            log.warn("waymark workflow: stopping group commit failed", e);
        }
    }

    /**
     * Configures a {@link WorkflowEngine}; every option has a default and is validated: a bad value,
     * null included, throws {@link WorkflowConfigException} naming the option.
     */
    public static final class Builder {
        private final EventStore store;
        private final WorkflowRegistry registry;
        private WorkflowCodec codec = WorkflowCodec.jackson();
        private WorkflowListener listener = new WorkflowListener() {};
        private Duration leaseTtl = DEFAULT_LEASE_TTL;
        private int maxAttempts = 5;
        private Duration backoffBase = Duration.ofSeconds(2);
        private Duration backoffCap = Duration.ofSeconds(64);
        private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
        private boolean runOnStart = true;
        private boolean groupCommit = true;
        private Duration shutdownTimeout = Duration.ofSeconds(10);
        private String owner;
        private Backpressure backpressure = Backpressure.off();
        private Duration backlogSampleInterval = DEFAULT_BACKLOG_SAMPLE_INTERVAL;

        private Builder(EventStore store, WorkflowRegistry registry) {
            this.store = Args.option(store, "store");
            this.registry = Args.option(registry, "registry");
        }

        /** Serialization of inputs and results (default Jackson). */
        public Builder codec(WorkflowCodec codec) {
            this.codec = Args.option(codec, "codec");
            return this;
        }

        /** Telemetry hooks (metrics, tracing). */
        public Builder listener(WorkflowListener listener) {
            this.listener = Args.option(listener, "listener");
            return this;
        }

        /**
         * How long a lease of a local run lasts without renewal (default {@link WorkflowEngine#DEFAULT_LEASE_TTL},
         * 30 s, as a resume worker's; renewed every third).
         */
        public Builder leaseTtl(Duration ttl) {
            this.leaseTtl = positive(ttl, "leaseTtl");
            return this;
        }

        /** Crashes of a local run before the workflow is marked failed (default 5). */
        public Builder maxAttempts(int maxAttempts) {
            if (maxAttempts < 1) {
                throw new WorkflowConfigException("maxAttempts must be >= 1, got " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** Backoff after the n-th crash: {@code base * 2^(n-1)}, at most {@code cap} (default 2 s, 64 s). */
        public Builder crashBackoff(Duration base, Duration cap) {
            this.backoffBase = positive(base, "crashBackoff base");
            this.backoffCap = positive(cap, "crashBackoff cap");
            if (cap.compareTo(base) < 0) {
                throw new WorkflowConfigException("crashBackoff cap " + cap + " is below its base " + base);
            }
            return this;
        }

        /**
         * Largest input, step result, result, awakeable value or awakeable failure reason in bytes of
         * JSON (default 1 MiB, at least {@value WorkflowClient#MIN_MAX_PAYLOAD_BYTES}).
         */
        public Builder maxPayloadBytes(int bytes) {
            this.maxPayloadBytes = requireMaxPayloadBytes(bytes);
            return this;
        }

        /** Whether {@code start} runs the workflow here at once (default true) or leaves it to resume workers. */
        public Builder runOnStart(boolean runOnStart) {
            this.runOnStart = runOnStart;
            return this;
        }

        /**
         * Whether starts, and runs that journal a step or a completion, share one transaction when
         * they happen at the same moment (default true). {@code start} and each step still return
         * only after their own entry is committed, and each
         * entry is fenced and deduplicated exactly as alone; sharing only spreads one commit over up
         * to {@value WorkflowEngine#MAX_STEP_BATCH} entries of distinct instances, which raises step
         * throughput when many workflows run at once. With it off, every entry is its own transaction.
         */
        public Builder groupCommit(boolean groupCommit) {
            this.groupCommit = groupCommit;
            return this;
        }

        /** How long {@code close} lets running attempts finish before interrupting them (default 10 s). */
        public Builder shutdownTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative()) {
                throw new WorkflowConfigException("shutdownTimeout must be >= 0, got " + timeout);
            }
            this.shutdownTimeout = timeout;
            return this;
        }

        /** The lease owner id (default a random one per engine); must be unique per running process. */
        public Builder owner(String owner) {
            if (owner == null || owner.isBlank() || owner.length() > 200) {
                throw new WorkflowConfigException("owner must be 1..200 characters, got " + owner);
            }
            this.owner = owner;
            return this;
        }

        /**
         * Whether {@code start} waits for the runnable backlog to fall below a bound (default
         * {@link Backpressure#off()}); see {@link Backpressure#maxBacklog}.
         */
        public Builder backpressure(Backpressure backpressure) {
            this.backpressure = Args.option(backpressure, "backpressure");
            return this;
        }

        /**
         * How old a backlog sample may be before the next {@link WorkflowEngine#backlog()}, backpressure
         * check or metric reads it again (default {@link WorkflowEngine#DEFAULT_BACKLOG_SAMPLE_INTERVAL},
         * 100 ms; 10 ms to 1 minute). Each read is one statement over the due instances.
         */
        public Builder backlogSampleInterval(Duration interval) {
            positive(interval, "backlogSampleInterval");
            if (interval.toMillis() < 10 || interval.compareTo(Duration.ofMinutes(1)) > 0) {
                throw new WorkflowConfigException("backlogSampleInterval must be in [10 ms, 1 min], got "
                        + interval);
            }
            this.backlogSampleInterval = interval;
            return this;
        }

        /** Builds the engine; it runs started workflows at once. */
        public WorkflowEngine build() {
            String id = owner != null ? owner : "engine-" + UUID.randomUUID();
            Instances instances = new Instances(StoreInternals.of(store).dataSource(), store.schema(), TransactionBounds.of(store));
            WorkflowEngine[] self = new WorkflowEngine[1];
            Runtime runtime = new Runtime(instances, codec, registry, listener, maxPayloadBytes, StoreInternals.of(store)::signalAppended,
                    (parent, child, started) -> self[0].childSpawned(parent, child, started), id, leaseTtl);
            LeaseKeeper keeper = new LeaseKeeper(instances, id, leaseTtl);
            self[0] = new WorkflowEngine(store, runtime, maxPayloadBytes, registry, keeper,
                    new Advancer.Policy(maxAttempts, backoffBase, backoffCap), runOnStart, shutdownTimeout, groupCommit,
                    backpressure, backlogSampleInterval);
            return self[0];
        }

        /** {@code d}, if it is positive; else an error naming it {@code what}. */
        static Duration positive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new WorkflowConfigException(what + " must be > 0, got " + d);
            }
            return d;
        }
    }
}
