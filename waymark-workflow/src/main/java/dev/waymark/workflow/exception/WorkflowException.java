package dev.waymark.workflow.exception;

import dev.waymark.core.WaymarkException;

/**
 * Base of the workflow module's runtime exceptions (a workflow failed or was cancelled, an awakeable
 * was rejected, a lease was lost, a start conflicted); the message carries the state that explains
 * it. A direct subclass of Waymark's root {@link WaymarkException}. Invalid input is an
 * {@link InvalidWorkflowInputException} (the input branch, {@link dev.waymark.core.WaymarkInputException})
 * and an invalid option a {@link WorkflowConfigException} (the configuration branch).
 *
 * <p>Database failures are not wrapped in it: every workflow operation that reads or writes the
 * database throws the event store's {@link dev.waymark.store.StoreException} subtypes as they are,
 * classified by SQLSTATE, with the cause kept. {@link dev.waymark.store.StoreUnavailableException}
 * (the database cannot be reached, the connection broke, the pool timed out) and
 * {@link dev.waymark.store.TransientStoreException} (a rollback such as a deadlock, or a lock wait
 * that ran out) are {@link dev.waymark.store.StoreException#isRetryable() retryable}: repeating the
 * call is safe, as {@code start} is idempotent and cancellations, settlements and retries report
 * what they find ({@code ALREADY_...}) when the first call did commit.
 * {@link dev.waymark.store.SchemaNotMigratedException} means the schema lacks Waymark's tables; any
 * other {@code StoreException} is not retryable. A caller that handles "anything Waymark threw"
 * catches {@link WaymarkException}.
 *
 * <p>Inside a workflow body, a store failure that escapes a step ends the run: a retryable one is
 * tried again on a later pass without counting as a crash; any other counts toward the engine's
 * {@code maxAttempts}.
 */
public class WorkflowException extends WaymarkException {

    private static final long serialVersionUID = 1L;

    /** With a message naming the problem. */
    public WorkflowException(String message) {
        super(message);
    }

    /** With a message and the cause. */
    public WorkflowException(String message, Throwable cause) {
        super(message, cause);
    }
}
