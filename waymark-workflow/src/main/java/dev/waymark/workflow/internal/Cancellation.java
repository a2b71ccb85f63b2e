package dev.waymark.workflow.internal;

import dev.waymark.store.BroadcastRegistration;
import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.workflow.exception.WorkflowException;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A workflow's cancellation from any process ({@code WorkflowClient.cancel}): the terminal marker,
 * its announcement to every engine on the schema (a store broadcast on {@link #TOPIC}), and the
 * cascade to the live children; and the hearing of such announcements by an engine.
 */
public final class Cancellation {

    /**
     * The store broadcast topic on which a cancellation is announced ({@code name/id}), so that the
     * process running the workflow stops it before its next fresh step.
     */
    public static final String TOPIC = "waymark.workflow.cancelled";

    private static final Logger log = LoggerFactory.getLogger(Cancellation.class);

    private final EventStore store;
    private final Instances instances;

    /** Cancellations of the instances of {@code store}'s schema. */
    public Cancellation(EventStore store, Instances instances) {
        this.store = store;
        this.instances = instances;
    }

    /**
     * Cancels {@code name}/{@code id} (a valid name and id) and its live descendants; an already
     * cancelled instance's live children are cancelled again (a cascade a crash cut short).
     */
    public CancelOutcome cancel(String name, String id) {
        Instances.Appended a = instances.appendTerminal(name, id, "WorkflowCancelled", "{}", null,
                WorkflowStatus.CANCELLED, null);
        return switch (a.kind()) {
            case APPENDED -> {
                StoreInternals.of(store).signalAppended();
                announce(name, id);
                cancelLiveChildren(name, id);
                yield CancelOutcome.CANCELLED;
            }
            case REFUSED -> {
                WorkflowStatus status = WorkflowStatus.fromSql(a.detail());
                if (status == WorkflowStatus.CANCELLED) {
                    cancelLiveChildren(name, id); // repairs a cascade an earlier cancel did not finish
                }
                yield already(status);
            }
            case MISSING -> CancelOutcome.UNKNOWN;
            case PRESENT, LEASE_LOST, STALE, BUSY -> throw new WorkflowException("cannot cancel workflow " + name + "/"
                    + id + ": " + a.kind() + " " + a.detail()); // unfenced, random id, stale retried: cannot happen
        };
    }

    /** Cancels the live children of a cancelled instance, and theirs. */
    public void cancelLiveChildren(String name, String id) {
        for (Instances.Key child : instances.queries().liveChildren(name, id)) {
            cancel(child.name(), child.id());
        }
    }

    /**
     * Tells {@code notices} of every cancellation announced on {@code store}'s schema, from whichever
     * process; close the registration to stop.
     */
    public static BroadcastRegistration hear(EventStore store, CancelNotices notices) {
        return StoreInternals.of(store).onBroadcast(TOPIC, message -> {
            int slash = message.indexOf('/'); // a workflow name has no '/'
            if (slash > 0) {
                notices.cancelled(new Instances.Key(message.substring(0, slash), message.substring(slash + 1)));
            }
        });
    }

    /** Tells the process running {@code name}/{@code id}, if any, that it is cancelled; best effort. */
    private void announce(String name, String id) {
        try {
            StoreInternals.of(store).broadcast(TOPIC, name + "/" + id);
        } catch (RuntimeException e) {
            // the cancellation is committed: its run still stops, at its next journal write at the latest
            log.warn("waymark workflow: could not announce the cancellation of {}/{}: {}", name, id, e.toString());
        }
    }

    private static CancelOutcome already(WorkflowStatus status) {
        return switch (status) {
            case COMPLETED -> CancelOutcome.ALREADY_COMPLETED;
            case CANCELLED -> CancelOutcome.ALREADY_CANCELLED;
            default -> CancelOutcome.ALREADY_FAILED;
        };
    }
}
