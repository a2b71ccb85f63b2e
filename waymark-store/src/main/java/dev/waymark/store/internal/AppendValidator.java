package dev.waymark.store.internal;

import com.fasterxml.jackson.core.JsonToken;
import dev.waymark.store.EventData;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.StreamAppend;
import dev.waymark.store.StreamNames;
import dev.waymark.store.plumbing.UuidV7;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Checks an append completely before any database work, and fills in generated event ids, so an
 * invalid append never touches the database and a retried one reuses its ids.
 */
final class AppendValidator {

    private AppendValidator() {}

    /** Validates {@code appends} and returns them with every event id assigned. */
    static List<StreamAppend> prepare(List<StreamAppend> appends, boolean allowReserved, Clock clock) {
        if (appends == null) {
            throw new InvalidInputException("the list of stream appends must not be null");
        }
        if (appends.isEmpty()) {
            throw new InvalidInputException("a multi-stream append needs at least one stream");
        }
        Set<String> streams = new HashSet<>();
        Set<UUID> ids = new HashSet<>();
        List<StreamAppend> prepared = new ArrayList<>(appends.size());
        for (StreamAppend append : appends) {
            if (append == null) {
                throw new InvalidInputException("a stream append must not be null");
            }
            String name = append.streamName();
            if (allowReserved) {
                StreamNames.requireWellFormed(name);
            } else {
                StreamNames.requireValid(name);
            }
            if (!streams.add(name)) {
                throw new InvalidInputException("stream '" + name
                        + "' appears more than once in one multi-stream append; merge its events into one entry");
            }
            if (append.events().isEmpty()) {
                throw new InvalidInputException("append to stream '" + name + "' has no events (an empty batch)");
            }
            List<EventData> events = new ArrayList<>(append.events().size());
            for (int i = 0; i < append.events().size(); i++) {
                EventData event = append.events().get(i);
                String where = "event " + i + " of the append to stream '" + name + "'";
                if (event == null) {
                    throw new InvalidInputException(where + " is null");
                }
                Json.check(event.data(), where + ": data");
                if (event.metadata() != null
                        && Json.check(event.metadata(), where + ": metadata") != JsonToken.START_OBJECT) {
                    throw new InvalidInputException(where + ": metadata must be a JSON object");
                }
                if (event.eventId() == null) {
                    event = event.withId(UuidV7.next(clock));
                }
                if (!ids.add(event.eventId())) {
                    throw new InvalidInputException(where + ": event id " + event.eventId()
                            + " is used twice in the same append");
                }
                events.add(event);
            }
            prepared.add(new StreamAppend(name, append.expected(), events));
        }
        return prepared;
    }
}
