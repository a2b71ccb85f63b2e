package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.ManualClock;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The store's {@code clock} option: it stamps each append's {@code createdAt} and the ids it generates. */
class StoreClockTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    @Test
    void created_at_and_generated_event_ids_come_from_the_configured_clock() {
        Instant at = Instant.parse("2020-01-01T00:00:00Z");
        ManualClock clock = new ManualClock(at);
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).clock(clock).build()) {
            store.migrate();
            store.append("clocked-1", ExpectedVersion.any(), EventData.json("E", "{}"));
            clock.advance(Duration.ofDays(1));
            store.append("clocked-1", ExpectedVersion.any(), EventData.json("E", "{}"));
            var events = store.readStreamForward("clocked-1", 0, 10);
            assertThat(events).extracting(RecordedEvent::createdAt).containsExactly(at, at.plus(Duration.ofDays(1)));
            assertThat(events).extracting(e -> millisOf(e.eventId()))
                    .containsExactly(at.toEpochMilli(), at.plus(Duration.ofDays(1)).toEpochMilli());
        }
    }

    /** The Unix milliseconds a version-7 UUID carries in its first 48 bits. */
    private static long millisOf(UUID id) {
        assertThat(id.version()).isEqualTo(7);
        return id.getMostSignificantBits() >>> 16;
    }
}
