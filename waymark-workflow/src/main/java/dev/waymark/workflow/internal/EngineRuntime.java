package dev.waymark.workflow.internal;

import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.WorkflowCodec;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.WorkflowRegistry;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** What every run shares: statements, codec, registry, limits, hooks. */
public final class EngineRuntime {

    private static final Logger log = LoggerFactory.getLogger(EngineRuntime.class);

    final Instances instances;
    final WorkflowCodec codec;
    final WorkflowRegistry registry;
    final WorkflowListener listener;
    final int maxPayloadBytes;
    final Runnable appended;
    /** Called after a run this runtime executes created a child. */
    final Spawned childSpawned;
    final String owner;
    final java.time.Duration leaseTtl;
    /** Cancellations heard of for runs under way here (see {@link CancelNotices}). */
    final CancelNotices cancels = new CancelNotices();
    /** Told of every wake time a run here parked on (resume workers plan their next pass by it). */
    private final java.util.List<java.util.function.Consumer<java.time.Instant>> dueHints = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Told when a run created a child workflow (leased to this runtime's owner when it has one). */
    @FunctionalInterface
    public interface Spawned {
        /** {@code parent} created {@code child}. */
        void spawned(Instances.Key parent, Instances.Key child, Instances.Started started);
    }

    /** Shared run state. {@code registry} may be null for a client that never runs workflows. */
    public EngineRuntime(Instances instances, WorkflowCodec codec, WorkflowRegistry registry, WorkflowListener listener,
            int maxPayloadBytes, Runnable appended, Spawned childSpawned,
            String owner, java.time.Duration leaseTtl) {
        this.instances = instances;
        this.codec = codec;
        this.registry = registry;
        this.listener = listener;
        this.maxPayloadBytes = maxPayloadBytes;
        this.appended = appended;
        this.childSpawned = childSpawned;
        this.owner = owner;
        this.leaseTtl = leaseTtl;
    }

    /** The statements. */
    public Instances instances() {
        return instances;
    }

    /** The cancellations heard of for runs under way here. */
    public CancelNotices cancels() {
        return cancels;
    }

    /** The codec. */
    public WorkflowCodec codec() {
        return codec;
    }

    /**
     * Encodes {@code value} in the form {@code jsonb} gives back (so that the run that journals a value
     * decodes what every replay decodes; see {@link JsonbText}) and checks the payload limit;
     * {@code what} names it in errors.
     *
     * @throws InvalidWorkflowInputException if the value is too large, or holds what jsonb cannot store
     */
    public String encode(Object value, String what) {
        String json = JsonbText.of(codec.encode(value), what);
        int bytes = json.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxPayloadBytes) {
            throw new InvalidWorkflowInputException(what + " is " + bytes + " bytes of JSON, the limit is "
                    + maxPayloadBytes + " (maxPayloadBytes)");
        }
        return json;
    }

    /**
     * Refuses an input that the registered input type of workflow {@code name} cannot read, and a
     * null one (read as Java null) unless that type is {@code Void}, before anything is written
     * (without a registry, or for a name it lacks, there is nothing to check): such an instance would
     * only crash on every attempt until it failed.
     *
     * @throws InvalidWorkflowInputException naming the workflow, the type and the reason
     */
    public void checkInput(String name, String id, String json) {
        if (registry == null) {
            return;
        }
        registry.find(name).ifPresent(definition -> {
            Class<?> type = definition.inputType();
            Object input;
            try {
                input = codec.decode(json, type);
            } catch (RuntimeException e) {
                throw new InvalidWorkflowInputException("input of workflow " + name + "/" + Text.escape(id)
                        + " cannot be read as " + type.getName() + ": " + e.getMessage(), e);
            }
            if (input == null && type != Void.class) {
                throw new InvalidWorkflowInputException("input of workflow " + name + "/" + Text.escape(id)
                        + " is null, and workflow " + name + " takes a " + type.getName() + ": pass one, or"
                        + " register the workflow with Void.class as its input type to start it without one");
            }
        });
    }

    /** Hears the wake time of every run here that parks on one (a sleep, a deadline); returns the un-registration. */
    public Runnable onDue(java.util.function.Consumer<java.time.Instant> hint) {
        dueHints.add(hint);
        return () -> dueHints.remove(hint);
    }

    /** A run here parked until {@code wakeAfter} (database time). */
    void parkedUntil(java.time.Instant wakeAfter) {
        for (java.util.function.Consumer<java.time.Instant> h : dueHints) {
            safely(() -> h.accept(wakeAfter));
        }
    }

    /** Tells the store that something was appended (wakes local waiters, coalesced NOTIFY). */
    void signal() {
        try {
            appended.run();
        } catch (RuntimeException e) {
            log.debug("waymark workflow: append signal failed", e);
        }
    }

    /**
     * Calls a listener (of a run, or of a resume worker): a runtime exception, a linkage error or an
     * assertion error it throws is logged and ignored, so telemetry never ends a run or a pass.
     */
    public void safely(Runnable hook) {
        try {
            hook.run();
        } catch (RuntimeException | LinkageError | AssertionError e) {
            // LinkageError too: a telemetry listener whose optional library is missing throws
            // NoClassDefFoundError, and a run must not die (its lease held, its handles waiting) of it
            log.warn("waymark workflow: listener threw; ignored", e);
        }
    }
}
