package dev.waymark.workflow;

import java.time.Instant;
import java.util.UUID;

/** One awakeable of a workflow: pending, completed, failed, cancelled or abandoned. */
public record AwakeableInfo(UUID id, int generation, String label, String status, String payload, String failure,
        Instant createdAt, Instant completedAt) {}
