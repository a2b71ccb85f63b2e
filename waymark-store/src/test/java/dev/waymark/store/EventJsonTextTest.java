package dev.waymark.store;

import static dev.waymark.store.StoreFixture.eventCount;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.waymark.testkit.PostgresExtension;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Text in event data and metadata reaches PostgreSQL as UTF-8: a lone UTF-16 surrogate, which has
 * no UTF-8 form, is refused instead of being stored as '?'; a surrogate pair is stored as it is.
 */
class EventJsonTextTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void a_lone_surrogate_in_a_data_value_is_refused_and_nothing_is_written() {
        store.append("text-1", ExpectedVersion.noStream(), EventData.json("Opened", "{}"));
        long before = eventCount(POSTGRES.dataSource());

        assertThatThrownBy(() -> store.append("text-1", ExpectedVersion.exactly(1),
                EventData.json("T", "{\"a\":\"x\uD83D\"}")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("event 0 of the append to stream 'text-1': data")
                .hasMessageContaining("lone UTF-16 surrogate");

        assertThat(eventCount(POSTGRES.dataSource())).isEqualTo(before);
        assertThat(store.readStreamForward("text-1", 0, 10)).extracting(RecordedEvent::type).containsExactly("Opened");
    }

    @Test
    void a_lone_surrogate_in_a_metadata_field_name_is_refused() {
        assertThatThrownBy(() -> store.append("text-2", ExpectedVersion.any(),
                EventData.json("T", "{}").withMetadata("{\"k\uDE00\":1}")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("event 0 of the append to stream 'text-2': metadata")
                .hasMessageContaining("lone UTF-16 surrogate");
        assertThat(store.streamInfo("text-2")).isEmpty();
    }

    @Test
    void a_lone_surrogate_written_as_a_json_escape_is_refused_the_same_way() {
        assertThatThrownBy(() -> store.appendMultiStream(List.of(
                StreamAppend.of("text-3a", ExpectedVersion.any(), List.of(EventData.json("T", "{}"))),
                StreamAppend.of("text-3b", ExpectedVersion.any(),
                        List.of(EventData.json("T", "[\"\\udc00 after\"]"))))))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("stream 'text-3b': data")
                .hasMessageContaining("lone UTF-16 surrogate");
        assertThat(store.streamInfo("text-3a")).isEmpty();
    }

    @Test
    void a_surrogate_pair_round_trips_raw_or_escaped() throws Exception {
        store.append("text-4", ExpectedVersion.noStream(), List.of(
                EventData.json("Raw", "{\"a\":\"x\uD83D\uDE00\"}").withMetadata("{\"\uD83D\uDE00\":\"k\"}"),
                EventData.json("Escaped", "{\"a\":\"x\\ud83d\\ude00\"}")));

        List<RecordedEvent> events = store.readStreamForward("text-4", 0, 10);
        assertThat(events).hasSize(2);
        for (RecordedEvent event : events) {
            JsonNode data = MAPPER.readTree(event.data());
            assertThat(data.get("a").asText()).isEqualTo("x\uD83D\uDE00");
        }
        assertThat(MAPPER.readTree(events.get(0).metadata()).get("\uD83D\uDE00").asText()).isEqualTo("k");
    }
}
