package dev.waymark.workflow;

import java.time.Instant;
import java.util.UUID;

/**
 * One event of a workflow journal.
 *
 * @param type WorkflowStarted, StepRecorded, WorkflowCompleted, WorkflowCancelled, WorkflowFailed or WorkflowContinuedAsNew
 * @param step the step name of a StepRecorded entry, else null
 * @param data the entry's JSON
 */
public record JournalEntry(int generation, long version, UUID eventId, String type, String step, String data, Instant recordedAt) {}
