package dev.waymark.workflow.internal;

import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.UUID;

/**
 * A journal entry to write, alone or sharing a transaction with others ({@link BatchJournal}): a start
 * ({@code WorkflowStarted}, its input in {@code data}), a step ({@code StepRecorded}) or a
 * completion marker ({@code WorkflowCompleted} with its result), fenced on {@code epoch} when not
 * null. A step may carry an {@link Awakeable} to create: its row is inserted in the same transaction,
 * exactly when the step's entry is written.
 */
public record JournalWrite(String name, String id, int generation, UUID eventId, String type, String data, Long epoch,
        String completedResult, Start start, Awakeable awakeable) {

    /** What a start carries besides its input: its parent (or null), owner (or null) and lease length. */
    public record Start(Instances.Key parent, String owner, Duration ttl) {}

    /** An awakeable that a step's entry creates: its id and label (of the entry's generation). */
    public record Awakeable(UUID id, String label) {}

    /** A start entry: the instance row and journal stream of a new instance, leased to {@code owner} if given. */
    public static JournalWrite start(String name, String id, String input, UUID eventId, Instances.Key parent,
            String owner,
            Duration ttl) {
        return new JournalWrite(name, id, 0, eventId, "WorkflowStarted", input, null, null,
                new Start(parent, owner, ttl), null);
    }

    /** A step entry. */
    public static JournalWrite step(String name, String id, int generation, UUID eventId, String data, Long epoch) {
        return new JournalWrite(name, id, generation, eventId, "StepRecorded", data, epoch, null, null, null);
    }

    /** A completion marker with the workflow's result (JSON). */
    public static JournalWrite completion(String name, String id, int generation, UUID eventId, String result,
            Long epoch) {
        return new JournalWrite(name, id, generation, eventId, "WorkflowCompleted",
                WorkflowJson.withRaw("result", result),
                epoch,
                result, null, null);
    }

    /** This step entry, creating {@code awakeable} (labelled {@code label}) when it is written. */
    public JournalWrite withAwakeable(UUID awakeable, String label) {
        if (start != null || completedResult != null) {
            throw new IllegalArgumentException("only a step entry creates an awakeable");
        }
        return new JournalWrite(name, id, generation, eventId, type, data, epoch, null, null,
                new Awakeable(awakeable, label));
    }

    WorkflowStatus terminal() {
        return completedResult == null ? null : WorkflowStatus.COMPLETED;
    }
}
