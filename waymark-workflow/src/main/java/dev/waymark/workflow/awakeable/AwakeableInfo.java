package dev.waymark.workflow.awakeable;

import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.WorkflowContext;
import java.time.Instant;
import java.util.UUID;

/**
 * One awakeable: its owner workflow and generation, and its state (pending, completed, failed,
 * cancelled, or abandoned by continue-as-new or the workflow's end; a {@link WorkflowClient#retry}
 * of a failed workflow makes its current generation's abandoned awakeables pending again).
 *
 * @param id the awakeable's id, as {@link Awakeable#id()} gives it
 * @param workflowName the name of the workflow that created it
 * @param workflowId the id of that workflow instance
 * @param generation the generation of the workflow that created it
 * @param label the name given to {@link WorkflowContext#awakeable}
 * @param status {@code pending}, {@code completed}, {@code failed}, {@code cancelled} or
 *     {@code abandoned}
 * @param payload the JSON text of a completed awakeable's value, else null
 * @param failure the reason of a failed awakeable, else null
 * @param createdAt when it was created (database clock)
 * @param completedAt when it was settled or abandoned (database clock), else null
 */
public record AwakeableInfo(UUID id, String workflowName, String workflowId, int generation, String label,
        String status, String payload, String failure,
        Instant createdAt, Instant completedAt) {}
