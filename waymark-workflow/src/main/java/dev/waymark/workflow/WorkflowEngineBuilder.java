package dev.waymark.workflow;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.store.plumbing.TransactionBounds;
import dev.waymark.workflow.backpressure.Backpressure;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.internal.Advancer;
import dev.waymark.workflow.internal.Args;
import dev.waymark.workflow.internal.EngineRuntime;
import dev.waymark.workflow.internal.HeldWaits;
import dev.waymark.workflow.internal.InProcessRuns;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.LeaseKeeper;
import dev.waymark.workflow.listener.WorkflowListener;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Configures a {@link WorkflowEngine}; every option has a default and is validated: a bad value,
 * null included, throws {@link WorkflowConfigException} naming the option.
 */
public final class WorkflowEngineBuilder {

    /** The default of {@link #runOnStart}: a started workflow runs in the starting process at once. */
    public static final boolean DEFAULT_RUN_ON_START = true;

    /** The default of {@link #groupCommit}: concurrent journal writes share transactions. */
    public static final boolean DEFAULT_GROUP_COMMIT = true;

    /** The default of {@link #holdWaits}: a run started here waits up to 5 s in memory. */
    public static final Duration DEFAULT_HOLD_WAITS = Duration.ofSeconds(5);

    /** The longest {@link #holdWaits} accepted: 10 minutes. */
    public static final Duration MAX_HOLD_WAITS = Duration.ofMinutes(10);

    /** The default of {@link #maxHeldWaits}: 10,000 runs. */
    public static final int DEFAULT_MAX_HELD_WAITS = 10_000;

    /** The default of {@link #shutdownTimeout}: 10 s. */
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

    private static final Logger log = LoggerFactory.getLogger(WorkflowEngineBuilder.class);

    private final EventStore store;
    private final WorkflowRegistry registry;
    private WorkflowCodec codec = WorkflowCodec.jackson();
    private WorkflowListener listener = new WorkflowListener() {};
    private Duration leaseTtl = WorkflowEngine.DEFAULT_LEASE_TTL;
    private RetryPolicy retry = WorkflowEngine.DEFAULT_RETRY;
    private int maxPayloadBytes = WorkflowClient.DEFAULT_MAX_PAYLOAD_BYTES;
    private boolean runOnStart = DEFAULT_RUN_ON_START;
    private boolean groupCommit = DEFAULT_GROUP_COMMIT;
    private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;
    private String owner;
    private Backpressure backpressure = Backpressure.off();
    private Duration backlogSampleInterval = WorkflowEngine.DEFAULT_BACKLOG_SAMPLE_INTERVAL;
    private Duration holdWaits = DEFAULT_HOLD_WAITS;
    private int maxHeldWaits = DEFAULT_MAX_HELD_WAITS;

    WorkflowEngineBuilder(EventStore store, WorkflowRegistry registry) {
        this.store = Args.option(store, "store");
        this.registry = Args.option(registry, "registry");
    }

    /** Serialization of inputs and results (default Jackson). */
    public WorkflowEngineBuilder codec(WorkflowCodec codec) {
        this.codec = Args.option(codec, "codec");
        return this;
    }

    /** Telemetry hooks (metrics, tracing). */
    public WorkflowEngineBuilder listener(WorkflowListener listener) {
        this.listener = Args.option(listener, "listener");
        return this;
    }

    /**
     * How long a lease of a local run lasts without renewal (default {@link WorkflowEngine#DEFAULT_LEASE_TTL},
     * 30 s, as a resume worker's; renewed every third).
     */
    public WorkflowEngineBuilder leaseTtl(Duration ttl) {
        this.leaseTtl = positive(ttl, "leaseTtl");
        return this;
    }

    /**
     * Crashes of a local run: {@code retry.maxAttempts()} attempts before the workflow is marked failed,
     * the n-th crash followed by {@code retry.delayBefore(n)} (default {@link WorkflowEngine#DEFAULT_RETRY}: 5 attempts,
     * 2 s doubling to 64 s). The database computes the backoff as it records the crash, so the policy
     * must double and have no jitter: use {@link RetryPolicy#exponential}.
     */
    public WorkflowEngineBuilder retry(RetryPolicy retry) {
        Advancer.Policy.of(retry, "retry");
        this.retry = retry;
        return this;
    }

    /**
     * Largest input, step result, result, awakeable value or awakeable failure reason in bytes of
     * JSON (default 1 MiB, at least {@value WorkflowClient#MIN_MAX_PAYLOAD_BYTES}).
     */
    public WorkflowEngineBuilder maxPayloadBytes(int bytes) {
        this.maxPayloadBytes = Args.maxPayloadBytes(bytes);
        return this;
    }

    /** Whether {@code start} runs the workflow here at once (default true) or leaves it to resume workers. */
    public WorkflowEngineBuilder runOnStart(boolean runOnStart) {
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
    public WorkflowEngineBuilder groupCommit(boolean groupCommit) {
        this.groupCommit = groupCommit;
        return this;
    }

    /**
     * How long {@link WorkflowEngine#close()} lets running attempts finish before interrupting them:
     * it is {@code stop(shutdownTimeout)} (default {@link #DEFAULT_SHUTDOWN_TIMEOUT}, 10 s; {@code >= 0}).
     */
    public WorkflowEngineBuilder shutdownTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new WorkflowConfigException("shutdownTimeout must be >= 0, got " + timeout);
        }
        this.shutdownTimeout = timeout;
        return this;
    }

    /** The lease owner id (default a random one per engine); must be unique per running process. */
    public WorkflowEngineBuilder owner(String owner) {
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
    public WorkflowEngineBuilder backpressure(Backpressure backpressure) {
        this.backpressure = Args.option(backpressure, "backpressure");
        return this;
    }

    /**
     * How old a backlog sample may be before the next {@link WorkflowEngine#backlog()}, backpressure
     * check or metric reads it again (default {@link WorkflowEngine#DEFAULT_BACKLOG_SAMPLE_INTERVAL},
     * 100 ms; 10 ms to 1 minute). Each read is one statement over the due instances.
     */
    public WorkflowEngineBuilder backlogSampleInterval(Duration interval) {
        positive(interval, "backlogSampleInterval");
        if (interval.toMillis() < 10 || interval.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new WorkflowConfigException("backlogSampleInterval must be in [10 ms, 1 min], got "
                    + interval);
        }
        this.backlogSampleInterval = interval;
        return this;
    }

    /**
     * How long a run of this engine waits in memory for a durable sleep or an awakeable before it
     * ends and leaves the wait to the database (default {@link #DEFAULT_HOLD_WAITS}, 5 s;
     * {@link Duration#ZERO} turns holding off; at most {@link #MAX_HOLD_WAITS}). What the run waits
     * for is journaled before it waits (the wake time; the awakeable's id and row), so a crash of
     * this process loses nothing. The run keeps its lease and its thread, the instance stays running,
     * and the run goes on in place when the sleep ends or the awakeable is settled (by any process),
     * without a suspension, a resume worker, a reload of the journal or a replay; a hold that ends
     * unresolved suspends the instance as it would have at once. A sleep is held only when it is no longer than this, and only on the run
     * that began it; an awakeable is held for up to this long, then left to resume workers. The
     * trade-off: while a run is held, only this engine can resume it, so if this process dies a
     * resume worker takes the instance over when its lease expires ({@link #leaseTtl}) rather than
     * when its wait resolves. Runs of resume workers never hold.
     */
    public WorkflowEngineBuilder holdWaits(Duration limit) {
        if (limit == null || limit.isNegative() || limit.compareTo(MAX_HOLD_WAITS) > 0) {
            throw new WorkflowConfigException("holdWaits must be in [0, " + MAX_HOLD_WAITS + "], got " + limit);
        }
        this.holdWaits = limit;
        return this;
    }

    /**
     * How many runs may wait in memory at once (default {@link #DEFAULT_MAX_HELD_WAITS}; at least 1);
     * beyond it a wait is left to the database at once. Each held run costs a parked virtual thread
     * and its lease, renewed with the others in one statement.
     */
    public WorkflowEngineBuilder maxHeldWaits(int max) {
        if (max < 1) {
            throw new WorkflowConfigException("maxHeldWaits must be >= 1, got " + max);
        }
        this.maxHeldWaits = max;
        return this;
    }

    /** Builds the engine; it runs started workflows at once. Logs its effective configuration (INFO, one line). */
    public WorkflowEngine build() {
        String id = owner != null ? owner : "engine-" + UUID.randomUUID();
        Instances instances = new Instances(StoreInternals.of(store).dataSource(), store.schema(),
                TransactionBounds.of(store));
        // the runtime tells the local runs of a child a local run spawned; the runs need the runtime
        AtomicReference<InProcessRuns> local = new AtomicReference<>();
        EngineRuntime runtime = new EngineRuntime(instances, codec, registry, listener, maxPayloadBytes,
                StoreInternals.of(store)::signalAppended,
                (parent, child, started) -> local.get().childSpawned(parent, child, started), id, leaseTtl);
        LeaseKeeper keeper = new LeaseKeeper(instances, id, leaseTtl);
        HeldWaits holds = new HeldWaits(holdWaits, maxHeldWaits, instances.awakeables(), store::wakeSignal, id);
        local.set(new InProcessRuns(runtime, registry, keeper, Advancer.Policy.of(retry, "retry"), runOnStart,
                backpressure, backlogSampleInterval, holds));
        WorkflowEngine engine = new WorkflowEngine(store, runtime, maxPayloadBytes, registry, keeper, local.get(),
                backpressure, shutdownTimeout, groupCommit);
        log.info("waymark workflow engine {}: schema={}, workflows={}, leaseTtl={}, retry={}, maxPayloadBytes={},"
                + " runOnStart={}, groupCommit={}, shutdownTimeout={}, backpressure={}, backlogSampleInterval={},"
                + " holdWaits={}, maxHeldWaits={}, codec={}", id, store.schema(), registry.names(), leaseTtl, retry,
                maxPayloadBytes, runOnStart, groupCommit, shutdownTimeout, backpressure, backlogSampleInterval,
                holdWaits, maxHeldWaits, codec.getClass().getName());
        return engine;
    }

    /** {@code d}, if it is positive; else an error naming it {@code what}. */
    static Duration positive(Duration d, String what) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new WorkflowConfigException(what + " must be > 0, got " + d);
        }
        return d;
    }
}
