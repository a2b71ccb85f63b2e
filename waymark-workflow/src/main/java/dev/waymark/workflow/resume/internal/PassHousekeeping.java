package dev.waymark.workflow.resume.internal;

import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.internal.CascadeRepair;
import dev.waymark.workflow.internal.EngineRuntime;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.ResumeParts;
import dev.waymark.workflow.resume.ResumeEvent;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * What a resume worker's pass does besides claiming and advancing, each told to the listener:
 * finishing cancellation cascades a crash cut short (when due), reporting runnable instances of
 * names not registered here (every {@link ResumeWorker#HOUSEKEEPING_INTERVAL} in the loop), and
 * reporting a pass that failed.
 */
final class PassHousekeeping {

    private final EngineRuntime runtime;
    private final Instances instances;
    private final WorkflowRegistry registry;
    private final ResumeOptions options;
    private final CascadeRepair cascades;
    private volatile long lastUnknownCheck = System.nanoTime() - ResumeWorker.HOUSEKEEPING_INTERVAL.toNanos();

    PassHousekeeping(ResumeParts parts, ResumeOptions options) {
        this.runtime = parts.runtime();
        this.instances = runtime.instances();
        this.registry = parts.registry();
        this.options = options;
        this.cascades = new CascadeRepair(instances, parts.cancel(), options.cascadeRepairInterval(),
                options.batchLimit());
    }

    /** Whether the loop's look for instances of unregistered names is due. */
    boolean unknownDue() {
        return System.nanoTime() - lastUnknownCheck >= ResumeWorker.HOUSEKEEPING_INTERVAL.toNanos();
    }

    /** Reports runnable instances nobody here can run (never claimed); returns how many. */
    int reportUnknown() {
        List<Instances.Key> unknown = instances.queries().discoverUnknown(registry.names(), options.batchLimit());
        for (Instances.Key key : unknown) {
            safely(() -> options.listener().onEvent(new ResumeEvent.UnknownName(key.name(), key.id())));
        }
        lastUnknownCheck = System.nanoTime();
        return unknown.size();
    }

    /** Cancels live children of cancelled workflows when due; a failure here never costs the pass. */
    void repairCascades() {
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

    /** Reports a failed pass; whatever the listener throws, the loop goes on. */
    void passFailed(Throwable e) {
        try {
            options.listener().onEvent(new ResumeEvent.PassFailed(e));
        } catch (RuntimeException | Error listenerFailure) {
            e.addSuppressed(listenerFailure);
            LoggerFactory.getLogger(ResumeLoop.class).error("waymark resume: pass failed", e);
        }
    }

    /** Calls the listener through the engine's one guard. */
    void safely(Runnable r) {
        runtime.safely(r);
    }
}
