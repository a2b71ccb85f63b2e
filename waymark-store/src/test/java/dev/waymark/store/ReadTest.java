package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.PostgresExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ReadTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        store.append("cart-1", ExpectedVersion.noStream(), events(5));
        store.append("order-1", ExpectedVersion.noStream(), events(3));
        store.append("cart-2", ExpectedVersion.noStream(), events(2));
        store.append("order-1", ExpectedVersion.exactly(3), events(2));
        store.append("long", ExpectedVersion.noStream(), events(1000));
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static List<Long> versions(List<RecordedEvent> events) {
        return events.stream().map(RecordedEvent::streamVersion).toList();
    }

    @Test
    void stream_reads_use_exclusive_cursors_both_ways() {
        assertThat(versions(store.readStreamForward("cart-1", 0, 100))).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(versions(store.readStreamForward("cart-1", 2, 2))).containsExactly(3L, 4L);
        assertThat(versions(store.readStreamBackward("cart-1", Long.MAX_VALUE, 2))).containsExactly(5L, 4L);
        assertThat(versions(store.readStreamBackward("cart-1", 4, 100))).containsExactly(3L, 2L, 1L);
        assertThat(store.readStreamForward("missing-1", 0, 10)).isEmpty();
    }

    @Test
    void recorded_events_carry_their_stream_version_position_and_payload() {
        List<RecordedEvent> read = store.readStreamForward("order-1", 0, 100);
        assertThat(read).allSatisfy(e -> {
            assertThat(e.streamName()).isEqualTo("order-1");
            assertThat(e.category()).isEqualTo("order");
            assertThat(e.createdAt()).isNotNull();
            assertThat(e.eventId().version()).isEqualTo(7);
        });
        assertThat(read.get(0).type()).isEqualTo("E0");
        assertThat(read.get(0).data()).isEqualTo("{\"i\": 0}");
        assertThat(read).extracting(RecordedEvent::position).isSorted().doesNotHaveDuplicates();
    }

    @Test
    void lazy_stream_paging_with_page_size_two_has_no_duplicates_or_gaps() {
        List<Long> forward = store.streamForward("long", 2).map(RecordedEvent::streamVersion).toList();
        assertThat(forward).containsExactlyElementsOf(LongStream.rangeClosed(1, 1000).boxed().toList());
        List<Long> backward = store.streamBackward("long", 7).map(RecordedEvent::streamVersion).toList();
        assertThat(backward).containsExactlyElementsOf(
                LongStream.rangeClosed(1, 1000).map(v -> 1001 - v).boxed().toList());
    }

    @Test
    void all_reads_page_forward_and_backward_in_global_order() {
        List<RecordedEvent> all = store.allForward(GlobalPosition.START, 3).toList();
        assertThat(all).extracting(RecordedEvent::position).isSorted().doesNotHaveDuplicates();
        assertThat(all).filteredOn(e -> List.of("cart-1", "order-1", "cart-2", "long").contains(e.streamName()))
                .hasSize(1012);
        List<RecordedEvent> paged = new ArrayList<>();
        GlobalPosition cursor = GlobalPosition.START;
        for (List<RecordedEvent> page; !(page = store.readAllForward(cursor, 100)).isEmpty();) {
            paged.addAll(page);
            cursor = page.get(page.size() - 1).position();
        }
        assertThat(paged).isEqualTo(all);
        List<RecordedEvent> backward = store.allBackward(GlobalPosition.END, 50).toList();
        assertThat(backward).isEqualTo(all.reversed());
        assertThat(store.headPosition()).isEqualTo(all.get(all.size() - 1).position());
        assertThat(store.readAllBackward(GlobalPosition.END, 1)).extracting(RecordedEvent::position)
                .containsExactly(store.headPosition());
    }

    @Test
    void category_reads_return_only_the_category_in_global_order() {
        List<RecordedEvent> carts = store.categoryForward("cart", GlobalPosition.START, 2).toList();
        assertThat(carts).hasSize(7).allSatisfy(e -> assertThat(e.category()).isEqualTo("cart"))
                .extracting(RecordedEvent::position).isSorted();
        assertThat(store.readCategoryForward("order", GlobalPosition.START, 100)).hasSize(5);
        assertThat(store.readCategoryBackward("order", GlobalPosition.END, 2))
                .extracting(RecordedEvent::streamVersion).containsExactly(5L, 4L);
        assertThat(store.readCategoryForward("nothing", GlobalPosition.START, 10)).isEmpty();
    }

    @Test
    void soft_deleted_streams_vanish_from_stream_reads_but_stay_in_all_and_category() {
        store.append("gone-1", ExpectedVersion.noStream(), events(2));
        assertThat(store.softDelete("gone-1")).isTrue();
        assertThat(store.softDelete("gone-1")).isFalse();
        assertThat(store.softDelete("never-1")).isFalse();
        assertThat(store.readStreamForward("gone-1", 0, 10)).isEmpty();
        assertThat(store.streamInfo("gone-1")).hasValueSatisfying(info -> {
            assertThat(info.isDeleted()).isTrue();
            assertThat(info.version()).isEqualTo(2);
            assertThat(info.category()).isEqualTo("gone");
        });
        assertThat(store.readCategoryForward("gone", GlobalPosition.START, 10)).hasSize(2);
        assertThat(store.allForward(GlobalPosition.START, 500).filter(e -> e.streamName().equals("gone-1"))).hasSize(2);
    }

    @Test
    void ids_causation_correlation_metadata_and_trace_context_round_trip() {
        UUID id = UUID.randomUUID();
        UUID causation = UUID.randomUUID();
        UUID correlation = UUID.randomUUID();
        String traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        EventData data = EventData.of("Shipped", java.util.Map.of("parcel", "p-9"))
                .withId(id).withCausationId(causation).withCorrelationId(correlation)
                .withMetadata("{\"tenant\":\"acme\",\"traceparent\":\"old\"}")
                .withTraceContext(traceparent, "vendor=1");
        store.append("ship-1", ExpectedVersion.noStream(), data);

        RecordedEvent read = store.readStreamForward("ship-1", 0, 1).get(0);
        assertThat(read.eventId()).isEqualTo(id);
        assertThat(read.causationId()).isEqualTo(causation);
        assertThat(read.correlationId()).isEqualTo(correlation);
        assertThat(read.traceparent()).contains(traceparent);
        assertThat(TraceContext.tracestate(read.metadata())).contains("vendor=1");
        assertThat(read.metadata()).contains("\"tenant\": \"acme\"");
        @SuppressWarnings("unchecked")
        java.util.Map<String, String> payload = read.dataAs(java.util.Map.class);
        assertThat(payload).containsEntry("parcel", "p-9");
    }

    @Test
    void streams_are_listed_by_name_in_pages_optionally_by_category() {
        assertThat(store.listStreams("cart", "", 10)).extracting(StreamInfo::name).containsExactly("cart-1", "cart-2");
        assertThat(store.listStreams("cart", "cart-1", 10)).extracting(StreamInfo::name).containsExactly("cart-2");
        assertThat(store.listStreams(null, "", 2)).extracting(StreamInfo::name).containsExactly("cart-1", "cart-2");
        assertThat(store.listStreams("order", "", 10)).singleElement()
                .satisfies(info -> assertThat(info.version()).isEqualTo(5));
    }

    @Test
    void global_positions_persist_as_text_and_order_by_transaction_then_sequence() {
        GlobalPosition p = new GlobalPosition(12, 7);
        assertThat(GlobalPosition.parse(p.toString())).isEqualTo(p);
        assertThat(new GlobalPosition(12, 99)).isLessThan(new GlobalPosition(13, 1));
        assertThat(GlobalPosition.START).isLessThan(p).isLessThan(GlobalPosition.END);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> GlobalPosition.parse("12"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'12'");
    }
}
