package dev.waymark.workflow;

/**
 * The side effect of a step. It runs at least once: a crash after it ran but before its result was
 * journaled runs it again, so it must be idempotent (key external calls on the workflow id and
 * step name).
 *
 * @param <T> the result type
 * @param <E> a checked exception the action may throw; it reaches the caller of
 *     {@link WorkflowContext#step} unchanged and nothing is journaled
 */
@FunctionalInterface
public interface StepAction<T, E extends Exception> {

    /** Performs the step. */
    T run() throws E;
}
