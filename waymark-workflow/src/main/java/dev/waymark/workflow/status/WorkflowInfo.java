package dev.waymark.workflow.status;

import java.time.Instant;

/**
 * One workflow instance as stored. Times are the database clock's.
 *
 * @param name the workflow name
 * @param id the instance id
 * @param generation its current generation: 0, then one more after each continue-as-new
 * @param status where it is in its life
 * @param attempts crashes counted against the crash budget ({@code maxAttempts}); back to 0 when
 *     it completes, continues as new or is retried
 * @param lastError the rendered error of the last crash, else null (cleared as {@code attempts} is)
 * @param failure why a {@link WorkflowStatus#FAILED} instance failed, else null
 * @param waitingOn what a suspended instance waits for, else null
 * @param wakeAfter when a sleeping instance becomes runnable, else null
 * @param nextAttemptAt the end of a crashed instance's backoff (no attempt before it), else null
 * @param leaseOwner the worker holding its lease, else null
 * @param leaseEpoch the lease's fencing epoch: it grows with every claim, and journal writes are
 *     accepted only from the holder of the current one (0 before the first claim)
 * @param leaseExpiresAt when the lease runs out unless renewed, else null
 * @param parentName the parent's name for a child workflow, else null
 * @param parentId the parent's id for a child workflow, else null
 * @param createdAt when it was started
 * @param updatedAt when its row last changed
 * @param completedAt when it reached its terminal status, else null (a retry clears it)
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
