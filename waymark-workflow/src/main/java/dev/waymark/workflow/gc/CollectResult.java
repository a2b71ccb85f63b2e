package dev.waymark.workflow.gc;

import dev.waymark.workflow.WorkflowClient;

/**
 * What one garbage-collection pass did ({@link WorkflowClient#collect}).
 *
 * @param scanned candidates the pass looked at
 * @param deleted instances deleted with their journals and awakeables
 * @param skipped candidates left in place: busy (an instance lock was held, for example by a retry
 *     or a start of the same id), no longer collectable when locked, or failed to delete (logged);
 *     each stays a candidate for the next pass if it still qualifies
 */
public record CollectResult(int scanned, int deleted, int skipped) {

    /** Both results added. */
    public CollectResult plus(CollectResult other) {
        return new CollectResult(scanned + other.scanned, deleted + other.deleted, skipped + other.skipped);
    }
}
