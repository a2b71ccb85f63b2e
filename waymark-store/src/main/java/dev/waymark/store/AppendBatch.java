package dev.waymark.store;

import java.time.Duration;

/**
 * What one group commit did (see {@link EventStoreBuilder#groupCommit(boolean)}): concurrent
 * appends that commit on their own, written by one statement in one transaction.
 *
 * @param appends the appends (single or multi-stream calls) the batch held, at least one
 * @param events the events of those appends
 * @param bytes the estimated size of those appends (event data, metadata, types, stream names)
 * @param committed the appends the batch wrote; the others failed their condition
 *     ({@link AppendConflictException}) or were handed back to their callers to append alone
 * @param appendedAlone the appends handed back to be appended alone, each in a transaction of its
 *     own: a stream lock another transaction held, an event id already stored, or a batch that
 *     failed as a whole without committing anything
 * @param longestWait how long the batch's oldest append waited for the batch to start (zero for an
 *     append that found no batch in flight)
 * @param duration how long the batch took, from taking a connection to the commit
 */
public record AppendBatch(
        int appends, int events, long bytes, int committed, int appendedAlone, Duration longestWait,
        Duration duration) {}
