package dev.waymark.workflow.awakeable;

import dev.waymark.workflow.WorkflowClient;
import java.util.UUID;

/**
 * A promise that another process completes by id. The id is journaled, so it is the same on every
 * replay of the generation that created it; hand it to the other party in a step of its own.
 *
 * @param <T> the value type
 */
public interface Awakeable<T> {

    /** The id to complete or fail through {@link WorkflowClient#completeAwakeable} / {@link WorkflowClient#failAwakeable}. */
    UUID id();

    /**
     * The completion value. Suspends the workflow until the awakeable is settled; the first
     * settlement wins and is journaled.
     *
     * @throws AwakeableFailedException if it was failed, with the reason
     * @throws AwakeableCancelledException if it was cancelled
     */
    T await();
}
