package dev.waymark.store;

import java.time.Duration;

/**
 * The state of the visibility horizon (docs/ARCHITECTURE.md, "Append and global order").
 * All-stream and category readers see an event only once every transaction older than its own has
 * ended; an open writing transaction anywhere in the PostgreSQL cluster therefore holds back what they can see.
 *
 * @param hiddenEvents committed events not yet visible to all-stream and category readers
 * @param oldestWriter the age of the oldest open transaction that holds a transaction id, or zero
 */
public record Horizon(long hiddenEvents, Duration oldestWriter) {}
