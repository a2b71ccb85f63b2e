package dev.waymark.workflow.gc;

import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Instant;

/**
 * A finished instance that garbage collection may delete: its key, how it ended and when (database
 * clock). See {@link WorkflowClient#collectable}.
 *
 * @param name the workflow name
 * @param id the instance id
 * @param status {@code COMPLETED}, {@code CANCELLED} or {@code FAILED}
 * @param finishedAt when it reached that status
 */
public record FinishedWorkflow(String name, String id, WorkflowStatus status, Instant finishedAt) {}
