package dev.waymark.workflow;

/**
 * The side effect of a step that has no result ({@link WorkflowContext#run}). Like a
 * {@link StepAction}, it runs at least once: a crash after it ran but before the step was journaled
 * runs it again, so it must be idempotent (key external calls on the workflow id and step name).
 *
 * @param <E> a checked exception the action may throw; it reaches the caller of
 *     {@link WorkflowContext#run} unchanged and nothing is journaled
 */
@FunctionalInterface
public interface StepRunnable<E extends Exception> {

    /** Performs the step. */
    void run() throws E;
}
