package dev.waymark.workflow;

import java.time.Instant;
import java.util.UUID;

/**
 * One awakeable: its owner workflow and generation, and its state (pending, completed, failed,
 * cancelled, or abandoned by continue-as-new or the workflow's end; a {@link WorkflowClient#retry}
 * of a failed workflow makes its current generation's abandoned awakeables pending again).
 */
public record AwakeableInfo(UUID id, String workflowName, String workflowId, int generation, String label, String status, String payload, String failure,
        Instant createdAt, Instant completedAt) {}
