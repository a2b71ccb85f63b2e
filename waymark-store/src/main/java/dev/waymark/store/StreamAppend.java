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

    /**
     * Copies the event list; the store validates the contents.
     *
     * @throws InvalidInputException if {@code expected} or {@code events} is null, or an event is
     *     null (naming its index)
     */
    public StreamAppend {
        if (expected == null) {
            throw new InvalidInputException("expected version must not be null (stream " + streamName + ")");
        }
        if (events == null) {
            throw new InvalidInputException("events must not be null (stream " + streamName + ")");
        }
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i) == null) { // List.copyOf would throw a bare NullPointerException
                throw new InvalidInputException("event " + i + " of the append to stream '" + streamName + "' is null");
            }
        }
        events = List.copyOf(events);
    }

    /** Shorthand for a new record. */
    public static StreamAppend of(String streamName, ExpectedVersion expected, List<EventData> events) {
        return new StreamAppend(streamName, expected, events);
    }
}
