package dev.waymark.workflow;

import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.store.plumbing.TransactionBounds;
import dev.waymark.workflow.awakeable.AwakeableCancelledException;
import dev.waymark.workflow.awakeable.AwakeableFailedException;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.UnknownWorkflowException;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.exception.WorkflowException;
import dev.waymark.workflow.exception.WorkflowStartConflictException;
import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.gc.FinishedWorkflow;
import dev.waymark.workflow.internal.Args;
import dev.waymark.workflow.internal.AwakeableReasons;
import dev.waymark.workflow.internal.Awakeables;
import dev.waymark.workflow.internal.Cancellation;
import dev.waymark.workflow.internal.ClientHooks;
import dev.waymark.workflow.internal.CollectionSql;
import dev.waymark.workflow.internal.EngineRuntime;
import dev.waymark.workflow.internal.Ids;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.JsonValues;
import dev.waymark.workflow.internal.SqlOutcomes;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.RetryOutcome;
import dev.waymark.workflow.status.WorkflowDetails;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Starts, signals, cancels and inspects workflows without running any: for processes that only
 * drive workflows that workers run (a web front end, the CLI). A {@link WorkflowEngine} composes one
 * ({@link WorkflowEngine#client()}) whose starts and wakes it runs itself. Thread-safe.
 *
 * <p>A null argument that is not documented as optional is refused with
 * {@link InvalidWorkflowInputException} naming it, like any other bad argument. Every method that
 * reads or writes the database throws {@link dev.waymark.store.StoreException}
 * (subtypes by SQLSTATE; {@link dev.waymark.store.StoreException#isRetryable()} says whether
 * repeating the call may succeed) when the database fails; see {@link WorkflowException}.
 */
public final class WorkflowClient {

    /**
     * Default limit of one input, step result, workflow result, awakeable value or awakeable failure
     * reason, in bytes of JSON.
     */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1 << 20;
    /** Smallest payload limit a client or an engine accepts. */
    public static final int MIN_MAX_PAYLOAD_BYTES = 64;

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(WorkflowClient.class);

    final EventStore store;
    final EngineRuntime runtime;
    final Instances instances;
    /** What the process this client runs in adds: nothing for a plain client, its local runs for an engine's. */
    private final ClientHooks hooks;
    private final CollectionSql collection;
    private final Cancellation cancellation;
    /** The payload limit {@code runtime} applies to what it encodes, for what is written unencoded (a failure reason). */
    private final int maxPayloadBytes;

    WorkflowClient(EventStore store, EngineRuntime runtime, int maxPayloadBytes, ClientHooks hooks) {
        this.store = Args.notNull(store, "store");
        this.hooks = hooks;
        this.runtime = runtime;
        this.instances = runtime.instances();
        this.collection = new CollectionSql(StoreInternals.of(store).dataSource(), store.schema(),
                TransactionBounds.of(store));
        this.maxPayloadBytes = maxPayloadBytes;
        this.cancellation = new Cancellation(store, instances);
    }

    /** A client on {@code store} with the default Jackson codec and payload limit. */
    public static WorkflowClient create(EventStore store) {
        return create(store, WorkflowCodec.jackson());
    }

    /** A client on {@code store} with {@code codec} and the default payload limit. */
    public static WorkflowClient create(EventStore store, WorkflowCodec codec) {
        return create(store, codec, DEFAULT_MAX_PAYLOAD_BYTES);
    }

    /**
     * A client on {@code store} with {@code codec} that refuses an input, an awakeable value or an
     * awakeable failure reason larger than {@code maxPayloadBytes} bytes of JSON (as
     * {@link WorkflowEngineBuilder#maxPayloadBytes} does; give both the same limit).
     *
     * @throws WorkflowConfigException if {@code maxPayloadBytes} is below
     *     {@value #MIN_MAX_PAYLOAD_BYTES}
     */
    public static WorkflowClient create(EventStore store, WorkflowCodec codec, int maxPayloadBytes) {
        Args.notNull(store, "store");
        Args.maxPayloadBytes(maxPayloadBytes);
        Instances instances = new Instances(StoreInternals.of(store).dataSource(), store.schema(),
                TransactionBounds.of(store));
        return new WorkflowClient(store, new EngineRuntime(instances, Args.notNull(codec, "codec"), null,
                new WorkflowListener() {}, maxPayloadBytes, StoreInternals.of(store)::signalAppended, (p, c, s) -> {},
                null, Duration.ZERO), maxPayloadBytes, ClientHooks.NONE);
    }

    /**
     * Starts workflow {@code name} with {@code id} durably: the instance row and its input are
     * committed before this returns, and a resume worker (or this engine) runs it. Idempotent:
     * starting an existing id with an equal input returns a handle to it.
     *
     * @throws InvalidWorkflowInputException for an invalid name or id (an id with an invisible or
     *     control character, see {@link WorkflowNames#requireNewId}, or whose journal stream name
     *     would exceed the event store's limit, see {@link WorkflowNames#requireJournalFits}), or an
     *     input that cannot be serialized or is too large; on an engine also an input that the
     *     registered input type cannot read, and a null input unless that type is {@code Void} (see
     *     {@link WorkflowRegistry}); nothing is written
     * @throws UnknownWorkflowException on an engine whose registry lacks {@code name}
     * @throws WorkflowStartConflictException if the id exists with a different input
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public <R> WorkflowHandle<R> start(String name, String id, Object input, Class<R> resultType) {
        WorkflowNames.requireName(name);
        WorkflowNames.requireNewId(id);
        WorkflowNames.requireJournalFits(name, id);
        Args.notNull(resultType, "resultType");
        hooks.checkRunnable(name);
        String json = runtime.encode(input, "input of workflow " + name + "/" + id);
        hooks.checkInput(name, id, json);
        hooks.admitStart(name, id);
        Instances.Started started = instances.start(name, id, json, Ids.entryId(name, id, 0, "__started__"), null,
                hooks.startOwner(), hooks.leaseTtl());
        if (!started.created()) {
            if (!JsonValues.same(started.existingInput(), json)) {
                throw new WorkflowStartConflictException("workflow " + name + "/" + id + " already exists ("
                        + started.status().sqlValue() + ") with a different input");
            }
        } else {
            StoreInternals.of(store).signalAppended();
            hooks.afterStart(new Instances.Key(name, id), started, json);
        }
        return new WorkflowHandle<>(this, name, id, resultType);
    }

    /**
     * A handle to instance {@code name}/{@code id}; no database access, so the instance need not
     * exist yet. Its reads and awaits throw {@link WorkflowException} while it does not exist: they
     * do not wait for it to be started.
     *
     * @throws InvalidWorkflowInputException for an invalid name or id
     */
    public <R> WorkflowHandle<R> handle(String name, String id, Class<R> resultType) {
        return new WorkflowHandle<>(this, WorkflowNames.requireName(name), WorkflowNames.requireId(id), resultType);
    }

    /**
     * Cancels a workflow from any process. A running body stops at its next step or await: the
     * cancellation is announced to every engine on the schema (a store broadcast), and the engine
     * running the body stops it before the next fresh step's action; the step in flight may finish
     * its action but is not journaled. Should the announcement be lost (the running process's LISTEN
     * connection was down), the next fresh step's action runs too, and its journal write is refused
     * instead. Live children are cancelled too: a child's start and its parent's cancellation take
     * the parent's lock, so a child whose start commits first is found by the cascade, and a body
     * that has not yet noticed its cancellation cannot spawn one afterwards (its spawn is refused and
     * the run stops as cancelled). Cancelling an already cancelled workflow cancels its live children
     * again (repairing a cascade a crash cut short; resume workers do so on their own, every
     * {@link dev.waymark.workflow.resume.ResumeOptions#cascadeRepairInterval()}). The first
     * terminal marker wins: cancel racing completion ends with exactly one of them.
     *
     * @throws InvalidWorkflowInputException for an invalid name or id; nothing is written
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public CancelOutcome cancel(String name, String id) {
        WorkflowNames.requireName(name);
        WorkflowNames.requireId(id);
        return cancellation.cancel(name, id);
    }

    /** Cancels the live children of a cancelled instance, and theirs (an engine's runs repair a cascade with it). */
    void cancelLiveChildren(String name, String id) {
        cancellation.cancelLiveChildren(name, id);
    }

    /**
     * Completes an awakeable with {@code value}; the first settlement wins and wakes its workflow.
     * Returns what happened instead of throwing for an unknown, settled or superseded id.
     *
     * @throws InvalidWorkflowInputException if the value cannot be serialized or is too large
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public AwakeableOutcome completeAwakeable(UUID awakeable, Object value) {
        Args.notNull(awakeable, "awakeable");
        return settle(awakeable, "completed", runtime.encode(value, "value of awakeable " + awakeable), null);
    }

    /**
     * Fails an awakeable: its await throws {@link AwakeableFailedException} with {@code reason}; the
     * first settlement wins and wakes its workflow. Returns what happened instead of throwing for an
     * unknown, settled or superseded id.
     *
     * @throws InvalidWorkflowInputException if the reason is blank, holds a NUL character or a lone
     *     UTF-16 surrogate, or is larger than the payload limit as a JSON string (the run journals it
     *     as one); nothing is written
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public AwakeableOutcome failAwakeable(UUID awakeable, String reason) {
        Args.notNull(awakeable, "awakeable");
        if (reason == null || reason.isBlank()) {
            throw new InvalidWorkflowInputException("failing awakeable " + awakeable + " needs a reason");
        }
        AwakeableReasons.requireStorable(awakeable, reason, maxPayloadBytes);
        return settle(awakeable, "failed", null, reason);
    }

    /**
     * Cancels an awakeable: its await throws {@link AwakeableCancelledException}; the first
     * settlement wins and wakes its workflow. Returns what happened instead of throwing for an
     * unknown, settled or superseded id.
     *
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public AwakeableOutcome cancelAwakeable(UUID awakeable) {
        Args.notNull(awakeable, "awakeable");
        return settle(awakeable, "cancelled", null, null);
    }

    /**
     * Revives a failed workflow: it is {@link WorkflowStatus#RUNNING} again with a fresh attempt
     * budget, and its journal is kept, so it resumes where it failed. The awakeables of its current
     * generation that its failure abandoned are pending again (a value sent to one while the
     * workflow was failed was refused as {@link AwakeableOutcome#SUPERSEDED} and must be sent again).
     *
     * @throws InvalidWorkflowInputException for an invalid name or id; nothing is written
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public RetryOutcome retry(String name, String id) {
        WorkflowNames.requireName(name);
        WorkflowNames.requireId(id);
        if (instances.retry(name, id)) {
            StoreInternals.of(store).signalAppended();
            return RetryOutcome.RETRIED;
        }
        return instances.find(name, id).isPresent() ? RetryOutcome.NOT_FAILED : RetryOutcome.UNKNOWN;
    }

    /**
     * A page of instances ordered by (name, id), as {@code query} selects them.
     *
     * @throws InvalidWorkflowInputException if {@code query} is null
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public List<WorkflowInfo> list(WorkflowQuery query) {
        Args.notNull(query, "query");
        Instances.Key after = query.afterName().map(n -> new Instances.Key(n, query.afterId().orElseThrow()))
                .orElse(null);
        return instances.queries().list(query.status().orElse(null), query.name().orElse(null), after, query.limit());
    }

    /**
     * An instance with its current generation's journal, awakeables and children; empty if it does
     * not exist.
     *
     * @throws InvalidWorkflowInputException if the name or id is null or invalid
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public Optional<WorkflowDetails> describe(String name, String id) {
        WorkflowNames.requireName(name);
        WorkflowNames.requireId(id);
        return instances.find(name, id).map(row -> new WorkflowDetails(row.info(), row.input(), row.result(),
                instances.journal(name, id, row.info().generation()), instances.awakeables().of(name, id),
                instances.queries().children(name, id)));
    }

    /**
     * Up to {@code limit} finished instances that {@link #collect} would delete now, oldest first:
     * completed, cancelled or failed at least {@code retention} ago by the database clock; not a
     * child whose parent is running, suspended or failed (the parent reads it when it resumes, and a
     * retry resumes a failed parent); and not a cancelled instance that still has running or
     * suspended children (a cascade a crash cut short). Reads only.
     *
     * @throws InvalidWorkflowInputException if {@code retention} is negative or {@code limit} is
     *     outside [1, 10000]
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public List<FinishedWorkflow> collectable(Duration retention, int limit) {
        return collection.candidates(Args.retention(retention), Args.inRange(limit, "limit"));
    }

    /**
     * One garbage-collection pass: deletes up to {@code limit} of the instances {@link #collectable}
     * lists, each in its own transaction with the journal of every generation (its events and
     * streams in the event store), its awakeables and its row. An instance is checked again under
     * its lock before it is deleted; one whose lock is held, one of whose children's rows is locked
     * at that moment, one that a retry revived meanwhile, or one whose deletion fails is skipped (a
     * failure is logged) and the others go on. A collected parent's unfinished children are detached
     * (they no longer name it as their parent) and run to their end; a collected id can be started
     * again as a new instance, which inherits none of them. Journal events deleted here are gone for
     * subscriptions that had not read them.
     *
     * @throws InvalidWorkflowInputException if {@code retention} is negative or {@code limit} is
     *     outside [1, 10000]
     * @throws dev.waymark.store.StoreException if the candidates cannot be read (see
     *     {@link WorkflowException}); a failure to delete one candidate is logged instead
     */
    public CollectResult collect(Duration retention, int limit) {
        Duration kept = Args.retention(retention);
        List<FinishedWorkflow> candidates = collection.candidates(kept, Args.inRange(limit, "limit"));
        int deleted = 0;
        for (FinishedWorkflow candidate : candidates) {
            try {
                if (collection.collect(candidate.name(), candidate.id(), kept) == SqlOutcomes.Collect.DELETED) {
                    deleted++;
                }
            } catch (RuntimeException e) {
                log.warn("collecting workflow {}/{} failed; it stays a candidate: {}", candidate.name(),
                        candidate.id(), e.toString());
            }
        }
        return new CollectResult(candidates.size(), deleted, candidates.size() - deleted);
    }

    /**
     * One awakeable by id: its owner workflow and its state; empty if no awakeable has this id.
     *
     * @throws dev.waymark.store.StoreException if the database fails (see {@link WorkflowException})
     */
    public Optional<AwakeableInfo> awakeable(UUID awakeable) {
        return instances.awakeables().info(Args.notNull(awakeable, "awakeable"));
    }

    /** The event store the journals live in. */
    public EventStore store() {
        return store;
    }

    /** An in-process future of the workflow's terminal outcome when this process runs it, else null. */
    java.util.concurrent.CompletableFuture<WorkflowOutcome<?>> watch(Instances.Key key) {
        return hooks.watch(key);
    }

    void unwatch(Instances.Key key, java.util.concurrent.CompletableFuture<WorkflowOutcome<?>> watcher) {
        hooks.unwatch(key, watcher);
    }

    /** Whether a run of the workflow is under way in this process (its end completes {@link #watch}). */
    boolean runsHere(Instances.Key key) {
        return hooks.runsHere(key);
    }

    private AwakeableOutcome settle(UUID awakeable, String status, String payload, String failure) {
        // shared: the settlements of concurrent callers commit together, and each learns its owner
        Awakeables.Settled r = instances.awakeables().settleShared(awakeable, status, payload, failure);
        return switch (r.outcome()) {
            case SETTLED -> {
                StoreInternals.of(store).signalAppended(); // coalesced: a few uncontended locks, no I/O
                if (r.owner() != null) {
                    hooks.afterWake(r.owner());
                }
                yield AwakeableOutcome.SETTLED;
            }
            case ALREADY_COMPLETED -> AwakeableOutcome.ALREADY_COMPLETED;
            case ALREADY_FAILED -> AwakeableOutcome.ALREADY_FAILED;
            case ALREADY_CANCELLED -> AwakeableOutcome.ALREADY_CANCELLED;
            case ALREADY_ABANDONED -> AwakeableOutcome.SUPERSEDED;
            case UNKNOWN -> AwakeableOutcome.UNKNOWN;
        };
    }

}
