package dev.waymark.store;

import static dev.waymark.store.StoreFixture.event;
import static dev.waymark.store.StoreFixture.eventCount;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A resent append whose earlier attempt committed is a {@link DuplicateEventException}, whatever its
 * expected version; a different batch at the same expected version is still a conflict.
 */
class IdempotentRetryTest {

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

    private static EventData withId(String type) {
        return event(type).withId(UUID.randomUUID());
    }

    @Test
    void resending_a_committed_no_stream_append_is_a_duplicate_not_stream_already_exists() {
        EventData placed = withId("Placed");
        store.append("resend-1", ExpectedVersion.noStream(), placed);
        long before = eventCount(POSTGRES.dataSource());

        assertThatThrownBy(() -> store.append("resend-1", ExpectedVersion.noStream(), placed))
                .isInstanceOfSatisfying(DuplicateEventException.class, e -> {
                    assertThat(e.eventId()).contains(placed.eventId());
                    assertThat(e.getCause()).isInstanceOf(StreamAlreadyExistsException.class);
                })
                .hasMessageContaining("resend-1").hasMessageContaining(placed.eventId().toString());
        assertThat(eventCount(POSTGRES.dataSource())).isEqualTo(before);
        assertThat(store.streamInfo("resend-1")).hasValueSatisfying(i -> assertThat(i.version()).isOne());
    }

    @Test
    void resending_a_committed_exact_version_append_is_a_duplicate_not_wrong_expected_version() {
        store.append("resend-2", ExpectedVersion.noStream(), event("Placed"));
        List<EventData> batch = List.of(withId("Paid"), withId("Shipped"));
        store.append("resend-2", ExpectedVersion.exactly(1), batch);

        assertThatThrownBy(() -> store.append("resend-2", ExpectedVersion.exactly(1), batch))
                .isInstanceOfSatisfying(DuplicateEventException.class, e -> {
                    assertThat(e.eventId()).contains(batch.get(0).eventId());
                    assertThat(e.getCause()).isInstanceOf(WrongExpectedVersionException.class);
                });
        assertThat(store.readStreamForward("resend-2", 0, 10)).extracting(RecordedEvent::type)
                .containsExactly("Placed", "Paid", "Shipped");
    }

    @Test
    void a_different_event_at_the_same_expected_version_is_still_a_conflict() {
        store.append("resend-3", ExpectedVersion.noStream(), withId("Placed"));
        store.append("resend-3", ExpectedVersion.exactly(1), withId("Paid"));

        assertThatThrownBy(() -> store.append("resend-3", ExpectedVersion.exactly(1), withId("Cancelled")))
                .isInstanceOfSatisfying(WrongExpectedVersionException.class,
                        e -> assertThat(e.actualVersion()).isEqualTo(2));
        assertThatThrownBy(() -> store.append("resend-3", ExpectedVersion.noStream(), withId("Placed")))
                .isInstanceOf(StreamAlreadyExistsException.class);
    }

    @Test
    void a_batch_only_partly_stored_is_still_a_conflict() {
        EventData placed = withId("Placed");
        store.append("resend-4", ExpectedVersion.noStream(), placed);

        // the caller's batch grew between attempts: it is not the batch that committed
        assertThatThrownBy(() -> store.append("resend-4", ExpectedVersion.noStream(), List.of(placed, withId("Paid"))))
                .isInstanceOf(StreamAlreadyExistsException.class);
    }

    @Test
    void ids_stored_in_another_stream_leave_the_conflict_a_conflict() {
        EventData moved = withId("Placed");
        store.append("resend-5a", ExpectedVersion.noStream(), moved);
        store.append("resend-5b", ExpectedVersion.noStream(), withId("Placed"));

        assertThatThrownBy(() -> store.append("resend-5b", ExpectedVersion.exactly(2), moved))
                .isInstanceOf(WrongExpectedVersionException.class);
    }

    @Test
    void resending_a_committed_multi_stream_append_is_a_duplicate() {
        List<StreamAppend> appends = List.of(
                StreamAppend.of("resend-6a", ExpectedVersion.noStream(), List.of(withId("A"), withId("B"))),
                StreamAppend.of("resend-6b", ExpectedVersion.any(), List.of(withId("C"))));
        store.appendMultiStream(appends);
        long before = eventCount(POSTGRES.dataSource());

        assertThatThrownBy(() -> store.appendMultiStream(appends)).isInstanceOf(DuplicateEventException.class);
        assertThat(eventCount(POSTGRES.dataSource())).isEqualTo(before);
    }

    @Test
    void a_multi_stream_append_of_which_one_stream_alone_committed_is_still_a_conflict() {
        EventData a = withId("A");
        store.append("resend-7a", ExpectedVersion.noStream(), a);

        assertThatThrownBy(() -> store.appendMultiStream(List.of(
                StreamAppend.of("resend-7a", ExpectedVersion.noStream(), List.of(a)),
                StreamAppend.of("resend-7b", ExpectedVersion.noStream(), List.of(withId("B"))))))
                .isInstanceOfSatisfying(StreamAlreadyExistsException.class,
                        e -> assertThat(e.streamName()).isEqualTo("resend-7a"));
        assertThat(store.streamInfo("resend-7b")).isEmpty();
    }

    @Test
    void resending_on_an_autocommit_connection_of_the_caller_is_a_duplicate_too() throws Exception {
        EventData placed = withId("Placed");
        try (Connection connection = POSTGRES.dataSource().getConnection()) {
            assertThat(connection.getAutoCommit()).isTrue();
            store.append(connection, "resend-8", ExpectedVersion.noStream(), List.of(placed));

            assertThatThrownBy(() -> store.append(connection, "resend-8", ExpectedVersion.noStream(), List.of(placed)))
                    .isInstanceOf(DuplicateEventException.class);
        }
    }
}
