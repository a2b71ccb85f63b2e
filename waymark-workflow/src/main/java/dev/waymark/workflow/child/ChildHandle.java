package dev.waymark.workflow.child;

/**
 * A child workflow spawned durably by a parent. The child runs on its own (locally at once, or on
 * any resume worker) and wakes its parent when it ends.
 *
 * @param <T> the child's result type
 */
public interface ChildHandle<T> {

    /** The child's workflow name. */
    String name();

    /** The child's workflow id. */
    String id();

    /**
     * The child's result. Suspends the parent until the child ends; the outcome is journaled in the
     * parent once.
     *
     * @throws ChildWorkflowFailedException if the child failed, with its reason
     * @throws ChildWorkflowCancelledException if the child was cancelled
     */
    T await();
}
