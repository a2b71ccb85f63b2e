package dev.waymark.store;

import static dev.waymark.store.StoreFixture.event;
import static dev.waymark.store.StoreFixture.eventCount;
import static dev.waymark.store.StoreFixture.streamCount;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Bad input gets a clear error, before any database work, and nothing is written. */
class InvalidInputTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @AfterEach
    void nothing_was_written() {
        assertThat(eventCount(POSTGRES.dataSource())).isZero();
        assertThat(streamCount(POSTGRES.dataSource())).isZero();
    }

    private static void refused(ThrowingCallable call, String message) {
        assertThatThrownBy(call).isInstanceOf(InvalidInputException.class).hasMessageContaining(message);
    }

    @Test
    void null_and_empty_names() {
        refused(() -> store.append(null, ExpectedVersion.any(), event("A")), "must not be null");
        refused(() -> store.append("", ExpectedVersion.any(), event("A")), "must not be empty");
    }

    @Test
    void over_long_names_count_utf8_bytes() {
        String ok = "a".repeat(512);
        String ascii = "a".repeat(513);
        String threeByte = "€".repeat(171); // 513 bytes
        refused(() -> store.append(ascii, ExpectedVersion.any(), event("A")), "513 bytes");
        refused(() -> store.append(threeByte, ExpectedVersion.any(), event("A")), "513 bytes");
        assertThat(StreamNames.requireValid(ok)).isEqualTo(ok);
    }

    @Test
    void reserved_and_control_character_names() {
        refused(() -> store.append("$all", ExpectedVersion.any(), event("A")), "reserved");
        refused(() -> store.append("order\u0000-1", ExpectedVersion.any(), event("A")), "control characters");
        refused(() -> store.softDelete("$wf-1"), "reserved");
        // a truncated emoji: sent as '?', it would have written to stream "order-?"
        refused(() -> store.append("order-\uD83D", ExpectedVersion.any(), event("A")), "lone UTF-16 surrogate");
        refused(() -> store.append("order-1", ExpectedVersion.any(), event("A\uDE00")), "lone UTF-16 surrogate");
        assertThat(StreamNames.requireValid("order-\uD83D\uDE00")).isEqualTo("order-\uD83D\uDE00"); // a pair is fine
    }

    @Test
    void empty_batches_for_every_variant_and_in_multi_stream_appends() {
        for (ExpectedVersion v : List.of(ExpectedVersion.any(), ExpectedVersion.noStream(),
                ExpectedVersion.streamExists(), ExpectedVersion.exactly(3))) {
            refused(() -> store.append("order-1", v, List.of()), "no events");
        }
        refused(() -> store.appendMultiStream(List.of()), "at least one stream");
        refused(() -> store.appendMultiStream(List.of(
                StreamAppend.of("order-1", ExpectedVersion.any(), List.of(event("A"))),
                StreamAppend.of("order-2", ExpectedVersion.any(), List.of()))), "'order-2' has no events");
    }

    @Test
    void payloads_that_are_not_json() {
        refused(() -> store.append("order-1", ExpectedVersion.any(), EventData.json("A", "{not json")),
                "event 0 of the append to stream 'order-1': data is not valid JSON");
        refused(() -> store.append("order-1", ExpectedVersion.any(), EventData.json("A", "")), "empty");
        refused(() -> store.append("order-1", ExpectedVersion.any(), EventData.json("A", "{} {}")), "trailing");
        refused(() -> store.append("order-1", ExpectedVersion.any(), EventData.json("A", "{\"a\":\"\\u0000\"}")),
                "\\u0000");
        refused(() -> store.append("order-1", ExpectedVersion.any(),
                List.of(event("A"), event("B").withMetadata("[1]"))),
                "event 1 of the append to stream 'order-1': metadata must be a JSON object");
    }

    @Test
    void missing_types_data_and_expected_versions() {
        refused(() -> EventData.json(" ", "{}"), "event type");
        refused(() -> EventData.json("A", null), "data must not be null");
        refused(() -> StreamAppend.of("order-1", null, List.of(event("A"))), "expected version");
        // before: IllegalArgumentException, where every other bad input is an InvalidInputException
        refused(() -> ExpectedVersion.exactly(-5), "-5");
        refused(() -> ExpectedVersion.exactly(-1), "must be >= 1");
    }

    @Test
    void names_made_only_of_whitespace_or_invisible_characters_are_refused_as_blank_event_types_are() {
        // before: every one of these was accepted as a stream name (and the invisible ones as event types)
        for (String blank : List.of(" ", "\t ", "\u00A0\u3000", "\u200B", "\uFEFF", "\u2028", "\u2029",
                "\u202E\u2066", "\u200E\u200F", "\u2060\u180E", "\u3164", "\uFE0F")) {
            String shown = blank.codePoints().mapToObj(c -> String.format("U+%04X", c)).toList().toString();
            assertThatThrownBy(() -> store.append(blank, ExpectedVersion.any(), event("A"))).as(shown)
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("whitespace or invisible");
            assertThatThrownBy(() -> EventData.json(blank, "{}")).as(shown)
                    .isInstanceOf(InvalidInputException.class).hasMessageContaining("event type");
        }
        refused(() -> store.append("\u200B-1", ExpectedVersion.any(), event("A")), "category");
        // a visible character among invisible ones is a name
        assertThat(StreamNames.requireValid("order-\u200B1")).isEqualTo("order-\u200B1");
        assertThat(EventData.json("Order\u00A0Placed", "{}").type()).isEqualTo("Order\u00A0Placed");
    }

    @Test
    void line_separators_and_bidi_controls_are_refused_anywhere_in_a_name_or_event_type() {
        refused(() -> store.append("order-1\u2028x", ExpectedVersion.any(), event("A")), "U+2028");
        refused(() -> store.append("order-\u202Efdp", ExpectedVersion.any(), event("A")), "U+202E");
        refused(() -> EventData.json("Placed\u2066", "{}"), "U+2066");
    }

    @Test
    void names_whose_category_is_empty_are_refused_since_no_category_read_could_find_them() {
        // before: appended, then unreadable by category (a category read of '' is refused)
        refused(() -> store.append("-", ExpectedVersion.any(), event("A")), "empty category");
        refused(() -> store.append("-abc", ExpectedVersion.any(), event("A")), "empty category");
        refused(() -> store.appendMultiStream(List.of(
                StreamAppend.of("order-1", ExpectedVersion.any(), List.of(event("A"))),
                StreamAppend.of("-order-2", ExpectedVersion.any(), List.of(event("A"))))), "'-order-2'");
        assertThat(StreamNames.requireValid("order-")).isEqualTo("order-"); // category 'order', readable
    }

    @Test
    void event_types_longer_than_the_documented_limit_are_refused() {
        String longest = "T".repeat(EventData.MAX_TYPE_BYTES);
        assertThat(EventData.json(longest, "{}").type()).isEqualTo(longest);
        // before: no limit at all
        refused(() -> EventData.json(longest + "T", "{}"), "257 bytes");
        refused(() -> EventData.json("\u20AC".repeat(86), "{}"), "258 bytes"); // 3 bytes each in UTF-8
    }

    @Test
    void json_numbers_postgresql_cannot_store_are_refused_naming_the_event() {
        // before: sent to the database, which failed with "value overflows numeric format" (a plain StoreException)
        for (String number : List.of("1e200000", "-1e131072", "1e-20000", "1.5E+1000")) {
            refused(() -> store.append("order-1", ExpectedVersion.any(), EventData.json("A", "{\"n\":" + number + "}")),
                    "event 0 of the append to stream 'order-1': data");
            refused(() -> store.append("order-1", ExpectedVersion.any(), EventData.json("A", "[" + number + "]")),
                    "number");
        }
        refused(() -> store.append("order-1", ExpectedVersion.any(),
                EventData.json("A", "{}").withMetadata("{\"n\":1e200000}")), "metadata");
    }

    @Test
    void json_beyond_the_read_limits_is_reported_as_a_limit_not_as_invalid_json() {
        String deep = "[".repeat(EventData.MAX_JSON_DEPTH + 1) + "]".repeat(EventData.MAX_JSON_DEPTH + 1);
        assertThatThrownBy(() -> store.append("order-1", ExpectedVersion.any(), EventData.json("A", deep)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("nesting depth")
                .hasMessageContaining("EventData.MAX_JSON_DEPTH")
                .hasMessageNotContaining("not valid JSON");
        String digits = "1".repeat(EventData.MAX_JSON_NUMBER_LENGTH + 1);
        assertThatThrownBy(
                () -> store.append("order-1", ExpectedVersion.any(), EventData.json("A", "[" + digits + "]")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("EventData.MAX_JSON_NUMBER_LENGTH")
                .hasMessageNotContaining("not valid JSON");
        String text = "x".repeat(EventData.MAX_JSON_STRING_LENGTH + 1);
        assertThatThrownBy(() -> store.append("order-1", ExpectedVersion.any(),
                EventData.json("A", "{\"s\":\"" + text + "\"}")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("EventData.MAX_JSON_STRING_LENGTH")
                .hasMessageNotContaining("not valid JSON");
    }

    @Test
    void a_shortened_name_in_a_message_never_ends_in_half_a_surrogate_pair() {
        String name = "a".repeat(39) + "\uD83D\uDE00".repeat(200); // the 40th char is a high surrogate
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.any(), event("A")))
                .isInstanceOf(InvalidInputException.class)
                .satisfies(e -> assertThat(dev.waymark.store.plumbing.Utf16.loneSurrogate(e.getMessage()))
                        .as("index of a lone surrogate in: %s", e.getMessage()).isEqualTo(-1));
    }

    @Test
    void a_null_event_is_named_by_its_index() {
        // before: a bare NullPointerException from List.copyOf / List.of
        refused(() -> store.append("order-1", ExpectedVersion.any(), java.util.Arrays.asList(event("A"), null)),
                "event 1 of the append to stream 'order-1' is null");
        refused(() -> store.append("order-1", ExpectedVersion.any(), (EventData) null),
                "event 0 of the append to stream 'order-1' is null");
        refused(() -> store.appendMultiStream(List.of(StreamAppend.of("order-2", ExpectedVersion.any(),
                java.util.Arrays.asList(null, event("B"))))), "event 0 of the append to stream 'order-2' is null");
    }

    @Test
    void event_types_with_control_characters_and_null_payloads() {
        // before: accepted, as stream names are not (a NUL then failed in the database)
        refused(() -> EventData.json("Order\u0000Placed", "{}"),
                "event type must not contain control characters (index 5)");
        refused(() -> EventData.json("Order\nPlaced", "{}"), "control characters (index 5)");
        // before: NullPointerException "payload"
        refused(() -> EventData.of("OrderPlaced", null), "event payload must not be null (type OrderPlaced)");
    }

    @Test
    void a_bad_consumer_group_size_is_invalid_input_as_for_a_partition() {
        // before: IllegalArgumentException from StreamNames.member, InvalidInputException from Partition
        refused(() -> StreamNames.member("order-1", 0), "consumer group size must be >= 1, got 0");
        refused(() -> Partition.of(0, 0), "consumer group size must be >= 1, got 0");
    }

    @Test
    void the_same_event_id_twice_in_one_append() {
        UUID id = UUID.randomUUID();
        refused(() -> store.append("order-1", ExpectedVersion.any(),
                List.of(event("A").withId(id), event("B").withId(id))), "used twice");
    }

    @Test
    void read_arguments() {
        refused(() -> store.readStreamForward("order-1", 0, 0), "limit must be >= 1");
        refused(() -> store.readAllForward(null, 10), "must not be null");
        refused(() -> store.readCategoryForward("a-b", GlobalPosition.START, 10), "contain no '-'");
        refused(() -> store.allForward(GlobalPosition.START, 0), "page size");
    }

    @Test
    void malformed_trace_context() {
        refused(() -> event("A").withTraceContext("00-abc", null), "not a W3C traceparent");
    }

    @Test
    void invalid_schema_names_fail_at_build_and_unknown_schemas_at_first_use() {
        assertThatThrownBy(() -> EventStore.builder(POSTGRES.dataSource()).schema("Bad-Name").build())
                .isInstanceOf(StoreConfigException.class).hasMessageContaining("'Bad-Name'");
        assertThatThrownBy(() -> EventStore.builder(POSTGRES.dataSource()).schema("x\"; drop").build())
                .isInstanceOf(StoreConfigException.class);
        try (EventStore unknown = EventStore.builder(POSTGRES.dataSource()).schema("nowhere").build()) {
            assertThatThrownBy(() -> unknown.append("order-1", ExpectedVersion.any(), event("A")))
                    .isInstanceOfSatisfying(SchemaNotMigratedException.class,
                            e -> assertThat(e.schema()).isEqualTo("nowhere"))
                    .hasMessageContaining("\"nowhere\"").hasMessageContaining("migrat");
            assertThatThrownBy(() -> unknown.readAllForward(GlobalPosition.START, 10))
                    .isInstanceOf(SchemaNotMigratedException.class);
        }
    }

    @Test
    void builder_options_out_of_bounds() {
        assertThatThrownBy(() -> EventStore.builder(POSTGRES.dataSource()).fallbackPoll(Duration.ZERO).build())
                .isInstanceOf(StoreConfigException.class).hasMessageContaining("fallbackPoll")
                .hasMessageContaining("got 0 ms");
        assertThatThrownBy(() -> EventStore.builder(POSTGRES.dataSource())
                .reconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)).build())
                .isInstanceOf(StoreConfigException.class).hasMessageContaining("reconnectBackoff max");
        assertThatThrownBy(() -> EventStore.builder(null).build())
                .isInstanceOf(StoreConfigException.class).hasMessageContaining("dataSource");
    }
}
