package dev.waymark.store;

import java.util.List;

/**
 * One stream's part of an atomic multi-stream append.
 *
 * @param streamName the stream
 * @param expected the stream's expected version
 * @param events the events, at least one
 */
public record StreamAppend(String streamName, ExpectedVersion expected, List<EventData> events) {

    /** Copies the event list; the store validates the contents. */
    public StreamAppend {
        if (expected == null) {
            throw new InvalidInputException("expected version must not be null (stream " + streamName + ")");
        }
        if (events == null) {
            throw new InvalidInputException("events must not be null (stream " + streamName + ")");
        }
        events = List.copyOf(events);
    }

    /** Shorthand for a new record. */
    public static StreamAppend of(String streamName, ExpectedVersion expected, List<EventData> events) {
        return new StreamAppend(streamName, expected, events);
    }
}
