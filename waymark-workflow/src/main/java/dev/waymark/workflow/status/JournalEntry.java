package dev.waymark.workflow.status;

import java.time.Instant;
import java.util.UUID;

/**
 * One event of a workflow journal.
 *
 * @param generation the generation whose journal stream holds it
 * @param version its version in that stream (the journal's order)
 * @param eventId its event id in the event store (derived from the instance, generation and step,
 *     so that a repeated write of the same entry is a duplicate)

 * @param type WorkflowStarted, StepRecorded, WorkflowCompleted, WorkflowCancelled, WorkflowFailed or WorkflowContinuedAsNew
 * @param step the step name of a StepRecorded entry, else null
 * @param data the entry's JSON
 * @param recordedAt when it was appended (database clock)
 */
public record JournalEntry(int generation, long version, UUID eventId, String type, String step, String data,
        Instant recordedAt) {}
