package dev.waymark.subscription;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.RecordedEvent;
import java.util.List;
import java.util.stream.IntStream;

/** Shared set-up of subscription tests. */
final class SubscriptionFixture {

    private SubscriptionFixture() {}

    static void append(EventStore store, String stream, String... types) {
        store.append(stream, ExpectedVersion.any(),
                java.util.Arrays.stream(types).map(t -> EventData.json(t, "{}")).toList());
    }

    static void appendMany(EventStore store, String category, int streams, int eventsPerStream) {
        for (int v = 0; v < eventsPerStream; v++) {
            for (int s = 0; s < streams; s++) {
                store.append(category + "-" + s, ExpectedVersion.any(), EventData.json("E", "{\"v\":" + v + "}"));
            }
        }
    }

    static List<RecordedEvent> all(EventStore store) {
        return store.allForward(GlobalPosition.START, 500).toList();
    }

    static List<EventData> events(int n) {
        return IntStream.range(0, n).mapToObj(i -> EventData.json("E", "{}")).toList();
    }
}
