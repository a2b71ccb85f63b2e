package dev.waymark.workflow;

import java.time.Instant;

/**
 * One workflow instance as stored.
 *
 * @param waitingOn what a suspended instance waits for, else null
 * @param wakeAfter when a sleeping instance becomes runnable, else null
 * @param leaseOwner the worker holding its lease, else null
 * @param parentName the parent's name for a child workflow, else null
 */
public record WorkflowInfo(
        String name,
        String id,
        int generation,
        WorkflowStatus status,
        int attempts,
        String lastError,
        String failure,
        String waitingOn,
        Instant wakeAfter,
        Instant nextAttemptAt,
        String leaseOwner,
        long leaseEpoch,
        Instant leaseExpiresAt,
        String parentName,
        String parentId,
        Instant createdAt,
        Instant updatedAt,
        Instant completedAt) {}
