package dev.waymark.workflow;

import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.child.ChildHandle;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.StepDecodeException;
import dev.waymark.workflow.exception.WorkflowStartConflictException;
import dev.waymark.workflow.internal.Args;
import dev.waymark.workflow.status.WorkflowOutcome;
import java.time.Duration;

/**
 * What a workflow body uses to do durable work. Every method is keyed by a name that must be stable
 * across code versions: replay matches journal entries by name, not by position. Names may not be
 * empty, longer than {@value WorkflowNames#MAX_STEP_NAME} characters, or start with a reserved
 * prefix ({@link WorkflowNames#RESERVED_STEP_PREFIXES}), or hold a NUL or a lone UTF-16 surrogate
 * ({@link WorkflowNames#requireStepName}); a name journaled for the first time may not hold an
 * invisible or control character either ({@link WorkflowNames#requireNewStepName}).
 *
 * <p>A name identifies one step of a run: a step, sleep, awakeable or child step name used a second
 * time in one run (one generation) is refused with {@link InvalidWorkflowInputException}, on the
 * first run and on replay alike, never answered with the first use's journal entry. Give each call
 * its own name (an index or a key: {@code "charge-" + i}). Each of these four kinds has names of its
 * own (a step and a sleep may share one); {@link #patch} may be asked again with the same id.
 *
 * <p>Every method refuses a bad argument (an invalid name, a null type, a negative duration) with
 * {@link InvalidWorkflowInputException} naming it. Thrown inside a body, it ends the run as a crash
 * (counted toward the engine's {@code maxAttempts}), as any exception the body lets escape.
 *
 * <p>The context belongs to one run on one thread; do not share it.
 */
public interface WorkflowContext {

    /** The workflow's registered name. */
    String workflowName();

    /** The workflow instance id. */
    String workflowId();

    /** The generation this run belongs to: 0, then one more after each {@link #continueAsNew}. */
    int generation();

    /**
     * Runs {@code action} once and journals its result, or returns the journaled result without
     * running it. The value returned is always what the journal holds (its codec round trip), even
     * on the first run; when two writers race on the same step the first journaled result wins.
     *
     * <p>A result that cannot be journaled (the codec cannot serialize it, it is larger than the
     * payload limit, it holds a NUL) fails the workflow at once, naming the step and the result's
     * type: every further attempt would run the action again to the same end.
     *
     * @throws E what the action threw; nothing is journaled
     * @throws StepDecodeException if the journaled value cannot be read as {@code type}
     * @throws InvalidWorkflowInputException if the name is invalid or was already used by a step of
     *     this run, or {@code type} or {@code action} is null
     */
    <T, E extends Exception> T step(String name, Class<T> type, StepAction<T, E> action) throws E;

    /**
     * A step with no result whose action returns {@code Void} ({@code return null}); prefer
     * {@link #run(String, StepRunnable)}, which needs neither.
     */
    default <E extends Exception> void step(String name, StepAction<Void, E> action) throws E {
        step(name, Void.class, action);
    }

    /**
     * A step with no result: runs {@code action} once and journals that it ran, or, when the step is
     * journaled, does nothing. Same guarantees and failures as
     * {@link #step(String, Class, StepAction)}, without a {@code Void} type or a {@code return null}:
     * {@code ctx.run("notify", () -> mailer.send(order))}.
     *
     * @throws E what the action threw; nothing is journaled
     * @throws InvalidWorkflowInputException if the name is invalid or was already used by a step of
     *     this run, or {@code action} is null
     */
    default <E extends Exception> void run(String name, StepRunnable<E> action) throws E {
        Args.notNull(action, "action");
        step(name, Void.class, () -> {
            action.run();
            return null;
        });
    }

    /**
     * Sleeps durably. The first run fixes the wake time (database clock + {@code duration}); replays
     * and restarts never postpone it. The workflow suspends until the wake time, then any resume
     * worker continues it.
     *
     * @throws InvalidWorkflowInputException if the name is invalid or was already used by a sleep of
     *     this run, or {@code duration} is null or negative
     */
    void sleep(String name, Duration duration);

    /**
     * Creates (or, on replay, returns) an awakeable identified by {@code name} in this generation;
     * its handle may be awaited more than once.
     *
     * @throws InvalidWorkflowInputException if the name is invalid or was already used by an
     *     awakeable of this run, or {@code type} is null
     */
    <T> Awakeable<T> awakeable(String name, Class<T> type);

    /**
     * Spawns a child workflow durably (once per {@code stepName}) and returns its handle; a replay
     * returns the handle of the child the first run spawned, whatever ids this call computes. The
     * input must be one the child's registered input type reads. Starting an existing id attaches
     * to that instance if its input is the same (else the step fails with
     * {@link WorkflowStartConflictException}); an instance this workflow did not create wakes it
     * at its end only through a check every 2 s.
     *
     * @throws InvalidWorkflowInputException if {@code stepName} or the child's name or id is invalid
     *     (when it would spawn, also an id with an invisible or control character), {@code stepName}
     *     was already used by a child of this run, the input is null and the child's input type is not
     *     {@code Void} (when it would spawn),
     *     the child is this workflow itself ({@code childName}/{@code childId} equal to this
     *     instance's), {@code type} is null, or, when it would
     *     spawn, if {@code stepName} ends with {@value WorkflowNames#CHILD_RESULT_SUFFIX} (reserved:
     *     the child's result is journaled under its step name with that suffix) or the child's
     *     journal stream name would exceed the event store's limit
     *     ({@link WorkflowNames#requireJournalFits})
     */
    <I, T> ChildHandle<T> child(String stepName, String childName, String childId, I input, Class<T> type);

    /**
     * Ends this generation and starts the next with {@code seed} as its input. Never returns: the run
     * unwinds and the outcome is {@link WorkflowOutcome.ContinuedAsNew}. Pending awakeables of this
     * generation are abandoned.
     */
    void continueAsNew(Object seed);

    /**
     * A code-change gate. Returns {@code true} when the run reaches this point executing new code
     * (no journal entry of this generation is still waiting to be replayed) and {@code false} when it
     * is replaying history recorded by older code. The decision is journaled, so it never changes for
     * an instance, and asking again in the same run gets the same answer.
     *
     * @throws InvalidWorkflowInputException if the id is not a valid step name
     */
    boolean patch(String id);
}
