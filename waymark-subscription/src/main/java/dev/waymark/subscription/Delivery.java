package dev.waymark.subscription;

import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;

/**
 * One delivery of an event to a handler.
 *
 * @param subscription the subscription's name
 * @param event the event
 * @param attempt 0 for the first delivery, then 1, 2, ... for retries within this run
 * @param partition the consumer-group member receiving it ({@link Partition#WHOLE} without a group, and in a dead letter's replay)
 */
public record Delivery(String subscription, RecordedEvent event, int attempt, Partition partition) {}
