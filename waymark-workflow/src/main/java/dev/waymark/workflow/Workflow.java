package dev.waymark.workflow;

/**
 * A workflow body: ordinary Java code that does its durable work through the context. The body is
 * re-invoked from the top on every resume; each named step returns its journaled result without
 * running again, so only the unjournaled tail executes. Code outside steps therefore runs on every
 * re-invocation and must be deterministic and free of side effects.
 *
 * @param <I> the input type, serialized with the engine's codec
 * @param <R> the result type, serialized with the engine's codec
 */
@FunctionalInterface
public interface Workflow<I, R> {

    /**
     * Runs (or replays) the workflow.
     *
     * @throws Exception any exception ends this attempt as a crash; the resume worker retries it with
     *     backoff until its attempt budget is spent, then marks the workflow failed
     */
    R run(WorkflowContext ctx, I input) throws Exception;
}
