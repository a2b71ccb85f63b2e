package dev.waymark.store;

import java.util.List;
import java.util.UUID;

/**
 * What one stream's append produced.
 *
 * @param streamName the stream appended to
 * @param streamVersion the stream's version after the append (the last event's version); pass it
 *     to {@link ExpectedVersion#exactly(long)} for the next append
 * @param firstPosition the global position of the first appended event
 * @param lastPosition the global position of the last appended event
 * @param eventIds the ids of the appended events, in order (generated ones included)
 */
public record AppendResult(
        String streamName,
        long streamVersion,
        GlobalPosition firstPosition,
        GlobalPosition lastPosition,
        List<UUID> eventIds) {

    /** Copies the id list. */
    public AppendResult {
        eventIds = List.copyOf(eventIds);
    }
}
