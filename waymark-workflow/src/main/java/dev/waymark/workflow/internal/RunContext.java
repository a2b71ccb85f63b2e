package dev.waymark.workflow.internal;

import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.awakeable.AwakeableCancelledException;
import dev.waymark.workflow.awakeable.AwakeableFailedException;
import dev.waymark.workflow.child.ChildHandle;
import dev.waymark.workflow.child.ChildWorkflowCancelledException;
import dev.waymark.workflow.child.ChildWorkflowFailedException;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.StepAction;
import dev.waymark.workflow.WorkflowContext;
import dev.waymark.workflow.exception.WorkflowException;
import dev.waymark.workflow.exception.WorkflowLeaseLostException;
import dev.waymark.workflow.WorkflowNames;
import dev.waymark.workflow.exception.WorkflowStartConflictException;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/** The context of one run of one generation: replays journaled entries by name, journals fresh ones. */
final class RunContext implements WorkflowContext {

    /** How often a workflow checks an awaited instance that is not its own child (see {@link #spawn}). */
    static final Duration ATTACHED_CHILD_POLL = Duration.ofSeconds(2);

    private final EngineRuntime rt;
    private final String name;
    private final String id;
    private final int generation;
    private final Long epoch;
    private final Map<String, String> journal;
    private final Set<String> visited = new HashSet<>();
    /** The journal keys of the named operations this run used: each may be used once (DESIGN.md decision 4). */
    private final Set<String> named = new HashSet<>();
    private final JournalValues values;
    /** Where this run may wait in memory for a sleep or an awakeable; null: it suspends at once. */
    private final HeldWaits holds;
    private boolean progressed;

    RunContext(EngineRuntime rt, String name, String id, int generation, Long epoch, Map<String, String> journal,
            HeldWaits holds) {
        this.rt = rt;
        this.holds = holds;
        this.name = name;
        this.id = id;
        this.generation = generation;
        this.epoch = epoch;
        this.journal = journal;
        this.values = new JournalValues(rt, name, id);
    }

    boolean progressed() {
        return progressed;
    }

    @Override
    public String workflowName() {
        return name;
    }

    @Override
    public String workflowId() {
        return id;
    }

    @Override
    public int generation() {
        return generation;
    }

    @Override
    public <T, E extends Exception> T step(String step, Class<T> type, StepAction<T, E> action) throws E {
        WorkflowNames.requireStepName(step);
        Args.notNull(type, "type");
        Args.notNull(action, "action");
        claim(step, "step", step);
        checkFresh(step, step);
        return recorded(step, type, action);
    }

    @Override
    public void sleep(String sleep, Duration duration) {
        WorkflowNames.requireStepName(sleep);
        if (duration == null || duration.isNegative()) {
            throw new InvalidWorkflowInputException("sleep '" + sleep + "' needs a duration >= 0, got " + duration);
        }
        String key = "sleep:" + sleep;
        claim(key, "sleep", sleep);
        visited.add(key);
        if (journal.containsKey(key)) {
            visited.add("sleepat:" + sleep); // its wake time is journaled too: not history still ahead
            replayed(key);
            return;
        }
        checkFresh("sleepat:" + sleep, sleep);
        // held in memory only when this run journaled the wake time: it then knows the sleep ends
        // {@code duration} after now, without comparing its clock with the database's
        boolean fresh = !journal.containsKey("sleepat:" + sleep);
        Instant fireAt = Instant.parse(recorded("sleepat:" + sleep, String.class,
                () -> rt.instances.dbNowPlus(duration).toString()));
        long hold = fresh && holds != null && duration.compareTo(holds.limit()) <= 0 ? duration.toNanos() : 0;
        awaitSource(key, "sleep '" + sleep + "' until " + fireAt, fireAt, null, null, () -> "null", hold);
    }

    @Override
    public <T> Awakeable<T> awakeable(String label, Class<T> type) {
        WorkflowNames.requireStepName(label);
        Args.notNull(type, "type");
        claim("awkid:" + label, "awakeable", label);
        checkFresh("awkid:" + label, label);
        // the id is journaled and its row written in one transaction (only if this run's entry wins)
        UUID fresh = UUID.randomUUID();
        UUID awakeable = UUID.fromString(recorded("awkid:" + label, String.class, fresh::toString,
                entry -> rt.instances.appendAwakeable(entry, fresh, label)));
        return new Awakeable<>() {
            @Override
            public UUID id() {
                return awakeable;
            }

            @Override
            public T await() {
                String key = "awk:" + label;
                String envelope = resolved(key, type, () -> values.awakeable(awakeable),
                        "awakeable '" + label + "' (" + awakeable + ")", awakeable, null, () -> null,
                        holds == null ? 0 : holds.limit().toNanos());
                return values.open(envelope, type, key,
                        reason -> new AwakeableFailedException(label + " (" + awakeable + ")", reason),
                        () -> new AwakeableCancelledException("awakeable " + label + " (" + awakeable
                                + ") of workflow " + name + "/" + id + " was cancelled"));
            }
        };
    }

    @Override
    public <I, T> ChildHandle<T> child(String stepName, String childName, String childId, I input, Class<T> type) {
        WorkflowNames.requireStepName(stepName);
        WorkflowNames.requireName(childName);
        WorkflowNames.requireId(childId);
        Args.notNull(type, "type");
        if (childName.equals(name) && childId.equals(id)) {
            throw new InvalidWorkflowInputException("workflow " + name + "/" + id + " cannot be its own child");
        }
        if (rt.registry != null) {
            rt.registry.require(childName);
        }
        String inputJson = rt.encode(input, "input of child " + childName + "/" + Text.escape(childId));
        claim("child:" + stepName, "child step", stepName);
        String spawned = recorded("child:" + stepName, String.class, () -> {
            // only for a fresh spawn: an instance that journaled one under such a name replays it
            WorkflowNames.requireChildStepName(stepName);
            WorkflowNames.requireNewStepName(stepName);
            spawn(childName, childId, inputJson);
            return childName + "/" + childId;
        });
        // the journaled child, not this call's arguments: an id made afresh on each run (a random
        // one, or a child renamed by a deploy) must not send a replay to another instance
        int slash = spawned.indexOf('/'); // a workflow name has no '/'
        Instances.Key child = new Instances.Key(spawned.substring(0, slash), spawned.substring(slash + 1));
        return new ChildHandle<>() {
            @Override
            public String name() {
                return child.name();
            }

            @Override
            public String id() {
                return child.id();
            }

            @Override
            public T await() {
                String key = "child:" + stepName + ":result";
                Instances.Row[] seen = new Instances.Row[1];
                String envelope = resolved(key, type, () -> values.child(child, seen),
                        "child " + child.name() + "/" + child.id(), null, child, () -> attachedChildWake(seen[0]), 0);
                return values.open(envelope, type, key,
                        reason -> new ChildWorkflowFailedException(child.name(), child.id(), reason),
                        () -> new ChildWorkflowCancelledException("child workflow " + child.name() + "/"
                                + child.id() + " was cancelled"));
            }
        };
    }

    @Override
    public void continueAsNew(Object seed) {
        throw new Unwind.Rotate(rt.encode(seed, "continue-as-new seed of " + name + "/" + id));
    }

    @Override
    public boolean patch(String patchId) {
        WorkflowNames.requireStepName(patchId);
        String key = "patch:" + patchId;
        // not claimed: a gate may be asked again (in several places of the code); it answers the same
        checkFresh(key, patchId);
        boolean atFrontier = journal.keySet().stream().allMatch(k -> k.equals(key) || visited.contains(k));
        return recorded(key, Boolean.class, () -> atFrontier);
    }

    private void spawn(String childName, String childId, String inputJson) {
        // here, not with the other checks: a replay of a spawn journaled before these rules must go on
        WorkflowNames.requireNewId(childId);
        WorkflowNames.requireJournalFits(childName, childId);
        rt.checkInput(childName, childId, inputJson);
        Instances.Started started = rt.instances.start(childName, childId, inputJson,
                Ids.entryId(childName, childId, 0, "__started__"), new Instances.Key(name, id), rt.owner, rt.leaseTtl);
        if (started.parentEnded()) {
            // this instance ended (a cancellation this run has not noticed yet) or is gone: no child
            // may outlive it, so none is created, and this run stops as its next write would
            if (started.status() != null && started.status().isTerminal()) {
                throw new Unwind.Terminal(started.status());
            }
            throw new WorkflowException("cannot spawn child " + childName + "/" + childId + ": workflow " + name + "/"
                    + id + " no longer exists");
        }
        if (started.created()) {
            rt.signal();
            rt.childSpawned.spawned(new Instances.Key(name, id), new Instances.Key(childName, childId), started);
        } else if (!JsonValues.same(started.existingInput(), inputJson)) {
            // attaching to an existing instance, as a start does: only with the same input
            throw new WorkflowStartConflictException("child workflow " + childName + "/" + childId + " of " + name
                    + "/" + id + " already exists (" + started.status().sqlValue() + ") with a different input");
        }
    }

    /**
     * When an awaited child is not this workflow's own (an instance that existed before the spawn
     * attached to it), its end wakes its own parent, or nobody: this workflow then checks it again
     * every {@link #ATTACHED_CHILD_POLL}.
     */
    private Instant attachedChildWake(Instances.Row row) {
        boolean own = row != null && name.equals(row.info().parentName()) && id.equals(row.info().parentId());
        return own ? null : rt.instances.dbNowPlus(ATTACHED_CHILD_POLL);
    }

    private <T, E extends Exception> T recorded(String key, Class<T> type, StepAction<T, E> action) throws E {
        return recorded(key, type, action, rt.instances::appendEntry);
    }

    /** {@link #recorded(String, Class, StepAction)}, journaling its entry through {@code writer}. */
    private <T, E extends Exception> T recorded(String key, Class<T> type, StepAction<T, E> action,
            Function<JournalWrite, Instances.Appended> writer) throws E {
        visited.add(key);
        String stored = journal.get(key);
        if (stored != null) {
            replayed(key);
            return values.decode(stored, type, key);
        }
        stopIfCancelled();
        long started = System.nanoTime();
        T value = action.run();
        String json = values.journalable(key, type, value);
        stored = journalStep(key, json, writer);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        rt.safely(() -> rt.listener.stepExecuted(name, key, elapsed));
        return values.decode(stored, type, key);
    }

    /**
     * Before a fresh action: when this process heard that the instance was cancelled, and its row
     * confirms that it is terminal, the run stops here without running the action.
     */
    private void stopIfCancelled() {
        Instances.Key key = new Instances.Key(name, id);
        CancelNotices.Notice notice = rt.cancels.notice(key);
        if (notice == null) {
            return;
        }
        WorkflowStatus status = rt.instances.find(name, id).map(r -> r.info().status()).orElse(null);
        if (status != null && status.isTerminal()) {
            throw new Unwind.Terminal(status);
        }
        // stale (an instance of the same id started again after collection): forget this notice,
        // not one heard while the row was read, which the next step confirms in turn
        rt.cancels.clear(key, notice);
    }

    /**
     * The journaled envelope of an await step, journaling it if its source resolved, else suspending
     * (held in memory for up to {@code holdNanos}, see {@link #awaitSource}).
     */
    private String resolved(String key, Class<?> type, Supplier<String> source, String waitingOn, UUID awakeable,
            Instances.Key child, Supplier<Instant> wakeAfter, long holdNanos) {
        visited.add(key);
        String stored = journal.get(key);
        if (stored != null) {
            replayed(key);
            return stored;
        }
        if (holdNanos <= 0 || holds == null) { // a held wait reads the source itself, once it is listed
            String envelope = source.get();
            if (envelope != null) {
                return journalStep(key, envelope);
            }
        }
        return awaitSource(key, waitingOn, wakeAfter.get(), awakeable, child, source, holdNanos);
    }

    /**
     * Waits for the source: with {@code holdNanos} > 0 and a hold to be had, first in memory, for up
     * to that long (a sleep: exactly its duration), keeping the lease; the run goes on in place when
     * the source resolves meanwhile. What it waits for is journaled already (the wake time, the
     * awakeable's id and row), so a crash of this process loses nothing: the instance is running
     * under a lease that expires, and the run that takes it over replays to this wait. Otherwise, or
     * when the hold ends first, the instance is suspended on the source unless it resolved.
     */
    private String awaitSource(String key, String waitingOn, Instant wakeAfter, UUID awakeable, Instances.Key child,
            Supplier<String> value, long holdNanos) {
        if (holdNanos > 0 && holds != null) {
            String held = null;
            boolean interrupted;
            try (HeldWaits.Hold hold = holds.hold(new Instances.Key(name, id), awakeable)) {
                if (hold != null) {
                    held = hold.resolve(holdNanos, awakeable != null, value, this::stopIfCancelled);
                }
            }
            if (held != null) {
                return journalStep(key, held);
            }
            // an interrupt (the engine's forced stop) ended the hold: the wait is still recorded first
            interrupted = Thread.interrupted();
            try {
                return suspended(key, waitingOn, wakeAfter, awakeable, child, value);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return suspended(key, waitingOn, wakeAfter, awakeable, child, value);
    }

    private String suspended(String key, String waitingOn, Instant wakeAfter, UUID awakeable, Instances.Key child,
            Supplier<String> value) {
        SqlOutcomes.Suspend r = rt.instances.suspend(name, id, generation, epoch, waitingOn, wakeAfter, awakeable,
                child);
        return switch (r) {
            case SUSPENDED -> {
                if (wakeAfter != null) {
                    rt.parkedUntil(wakeAfter);
                }
                throw new Unwind.Suspend(waitingOn);
            }
            case RESOLVED -> journalStep(key, Objects.requireNonNull(value.get(), "resolved source without a value"));
            case LEASE_LOST -> throw leaseLost();
            case COMPLETED, CANCELLED, FAILED -> throw new Unwind.Terminal(WorkflowStatus.valueOf(r.name()));
            case MISSING, STALE ->
                throw new WorkflowException("cannot suspend workflow " + name + "/" + id + " generation "
                        + generation + ": " + r);
        };
    }

    private String journalStep(String key, String json) {
        return journalStep(key, json, rt.instances::appendEntry);
    }

    private String journalStep(String key, String json, Function<JournalWrite, Instances.Appended> writer) {
        String data = WorkflowJson.withTextAndRaw("step", key, "result", json);
        Instances.Appended a = writer.apply(JournalWrite.step(name, id, generation,
                Ids.entryId(name, id, generation, key), data, epoch));
        String stored = switch (a.kind()) {
            case APPENDED -> {
                progressed = true; // no wake signal: a plain step creates no work for anyone else
                yield json;
            }
            case PRESENT -> a.detail();
            case REFUSED -> throw new Unwind.Terminal(WorkflowStatus.fromSql(a.detail()));
            case LEASE_LOST -> throw leaseLost();
            case STALE, MISSING, BUSY ->
                throw new WorkflowException("cannot journal step '" + key + "' of workflow " + name + "/" + id
                        + " generation " + generation + ": " + a.kind() + (a.detail() == null ? "" : " " + a.detail()));
        };
        journal.put(key, stored);
        return stored;
    }

    /**
     * Takes {@code key} for this run. A name identifies one step of a run (DESIGN.md decision 4): a
     * second use would be handed the first one's journal entry, so a loop over items would run its
     * action once and silently reuse the result; it is an error instead, on the first run and on
     * every replay alike (a replay of a run that used the name once goes on as before).
     */
    private void claim(String key, String kind, String userName) {
        if (!named.add(key)) {
            throw new InvalidWorkflowInputException(kind + " '" + Text.escape(userName) + "' is used twice in one run"
                    + " of workflow " + name + "/" + Text.escape(id) + " (generation " + generation + "): a name"
                    + " identifies one " + kind + " of a run, and a second use would get the first one's journal"
                    + " entry instead of doing its own; include an index or a key in the name (for example '"
                    + Text.escape(userName) + "-' + i)");
        }
    }

    /**
     * Checks the name of an operation about to journal {@code key} for the first time against the
     * rules for new names ({@link WorkflowNames#requireNewStepName}); a name already journaled (by a
     * build with looser rules) replays as it is.
     */
    private void checkFresh(String key, String userName) {
        if (!journal.containsKey(key)) {
            WorkflowNames.requireNewStepName(userName);
        }
    }

    private void replayed(String key) {
        rt.safely(() -> rt.listener.stepReplayed(name, key));
    }

    private WorkflowLeaseLostException leaseLost() {
        return new WorkflowLeaseLostException("workflow " + name + "/" + id + ": lease epoch " + epoch
                + " was taken over by another worker; this run stopped without journaling further");
    }
}
