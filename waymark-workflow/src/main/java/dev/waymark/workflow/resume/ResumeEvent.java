package dev.waymark.workflow.resume;

/** Something a resume worker reports through {@link ResumeListener#onEvent}. */
public sealed interface ResumeEvent {

    /**
     * A discovered instance's name is not registered; it is left untouched.
     *
     * @param name the unregistered workflow name
     * @param id the instance id
     */
    record UnknownName(String name, String id) implements ResumeEvent {}

    /**
     * A store error while advancing; retried on a later pass, no attempt consumed.
     *
     * @param name the workflow name
     * @param id the instance id
     * @param error the store's exception
     */
    record TransientError(String name, String id, Throwable error) implements ResumeEvent {}

    /**
     * The body threw on attempt {@code attempt} of {@code maxAttempts}; reported for every crash, the
     * last one included (then followed by {@link MarkedFailed}).
     *
     * @param name the workflow name
     * @param id the instance id
     * @param attempt the crash count of the instance, this crash included
     * @param maxAttempts the crash budget of this worker
     * @param error what the body (or its factory) threw
     */
    record Crashed(String name, String id, int attempt, int maxAttempts, Throwable error) implements ResumeEvent {}

    /**
     * The crash budget is spent; the workflow is marked failed (and its parent woken).
     *
     * @param name the workflow name
     * @param id the instance id
     * @param attempts the crashes it took
     * @param error what the last attempt threw
     */
    record MarkedFailed(String name, String id, int attempts, Throwable error) implements ResumeEvent {}

    /**
     * A live child of a cancelled workflow was cancelled: the cancellation's cascade had not reached
     * it (the cancelling process died between committing the parent's cancellation and cancelling its
     * children).
     *
     * @param name the cancelled child's workflow name
     * @param id the cancelled child's id
     * @param parentName the cancelled parent's workflow name
     * @param parentId the cancelled parent's id
     */
    record CascadeRepaired(String name, String id, String parentName, String parentId) implements ResumeEvent {}

    /**
     * A pass failed as a whole (for example the database was unreachable), or a part of it did (the
     * cancellation-cascade repair's query, or an attempt that threw unexpectedly); the loop goes on.
     *
     * @param error what the pass, or the part of it, threw
     */
    record PassFailed(Throwable error) implements ResumeEvent {}

    /** A one-line rendering for logs. */
    default String render() {
        return switch (this) {
            case UnknownName u -> "no registry entry for workflow " + u.name() + " (id " + u.id() + "); skipping";
            case TransientError t -> "transient store error while advancing " + t.name() + "/" + t.id() + ": "
                    + t.error();
            case Crashed c -> "workflow " + c.name() + "/" + c.id() + " crashed on attempt " + c.attempt() + "/"
                    + c.maxAttempts() + ": " + c.error();
            case MarkedFailed m -> "marked workflow " + m.name() + "/" + m.id() + " failed after " + m.attempts()
                    + " attempts: " + m.error();
            case CascadeRepaired r -> "cancelled workflow " + r.name() + "/" + r.id() + ": its parent "
                    + r.parentName() + "/" + r.parentId() + " was cancelled and the cascade had not reached it";
            case PassFailed p -> "resume pass failed: " + p.error();
        };
    }
}
