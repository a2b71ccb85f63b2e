package dev.waymark.workflow.listener;

import dev.waymark.workflow.status.WorkflowOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link WorkflowListener#of}: calls each listener in order, and one that throws never stops the others. */
final class CompositeWorkflowListener implements WorkflowListener {

    private static final Logger log = LoggerFactory.getLogger(CompositeWorkflowListener.class);

    private final List<WorkflowListener> listeners;
    /** "index:callback" of the listeners that threw from a callback already (logged at WARN once). */
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    CompositeWorkflowListener(List<WorkflowListener> listeners) {
        this.listeners = List.copyOf(listeners);
    }

    @Override
    public void runStarted(String name, String id) {
        each("runStarted", l -> l.runStarted(name, id));
    }

    @Override
    public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error, Duration elapsed) {
        each("runFinished", l -> l.runFinished(name, id, outcome, error, elapsed));
    }

    @Override
    public void stepExecuted(String name, String step, Duration elapsed) {
        each("stepExecuted", l -> l.stepExecuted(name, step, elapsed));
    }

    @Override
    public void stepReplayed(String name, String step) {
        each("stepReplayed", l -> l.stepReplayed(name, step));
    }

    private void each(String callback, Consumer<WorkflowListener> call) {
        for (int i = 0; i < listeners.size(); i++) {
            WorkflowListener listener = listeners.get(i);
            try {
                call.accept(listener);
            } catch (RuntimeException | LinkageError | AssertionError e) {
                // LinkageError too: a listener whose optional library is missing throws
                // NoClassDefFoundError on every call, and the others (a span to end) must still run
                if (warned.add(i + ":" + callback)) {
                    log.warn(
                            "waymark workflow: listener {} ({}) threw from {}; ignored, and logged at DEBUG from now on",
                            i, listener.getClass().getName(), callback, e);
                } else {
                    log.debug("waymark workflow: listener {} ({}) threw from {}; ignored", i,
                            listener.getClass().getName(), callback, e);
                }
            }
        }
    }
}
