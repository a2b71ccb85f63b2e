package dev.waymark.workflow.listener;

import dev.waymark.workflow.status.WorkflowOutcome;
import java.time.Duration;
import java.util.List;

/**
 * Telemetry hooks of the engine: metrics and tracing plug in here. Callbacks run on the workflow's
 * thread and must be fast and must not throw (a throwing listener is logged and ignored).
 */
public interface WorkflowListener {

    /** A run of {@code name}/{@code id} begins. */
    default void runStarted(String name, String id) {}

    /** A run ended with {@code outcome}, or with {@code error} (a crash) when outcome is null. */
    default void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error, Duration elapsed) {}

    /** A step's action ran and its result was journaled. */
    default void stepExecuted(String name, String step, Duration elapsed) {}

    /** A step returned its journaled result without running. */
    default void stepReplayed(String name, String step) {}

    /**
     * A listener that calls each of {@code listeners} in order (for example metrics and tracing). A
     * listener that throws (a runtime exception, a linkage error or an assertion error) from a
     * callback does not keep the others from it: the error is logged, at WARN the first time for
     * that listener and callback and at DEBUG after that, and the next listener is called.
     */
    static WorkflowListener of(WorkflowListener... listeners) {
        return new CompositeWorkflowListener(List.of(listeners));
    }

    /**
     * The label of a run's end that the bundled metrics ({@code outcome} tag) and traces
     * ({@code waymark.workflow.outcome}) both use: {@code completed}, {@code suspended},
     * {@code failed}, {@code cancelled}, {@code continued}, or {@code crashed} for a null outcome.
     */
    static String outcomeLabel(WorkflowOutcome<?> outcome) {
        return switch (outcome) {
            case null -> "crashed";
            case WorkflowOutcome.Completed<?> c -> "completed";
            case WorkflowOutcome.Suspended<?> s -> "suspended";
            case WorkflowOutcome.Failed<?> f -> "failed";
            case WorkflowOutcome.Cancelled<?> c -> "cancelled";
            case WorkflowOutcome.ContinuedAsNew<?> c -> "continued";
        };
    }
}
