package dev.waymark.store;

import static dev.waymark.store.StoreFixture.event;
import static dev.waymark.store.StoreFixture.eventCount;
import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.testkit.PostgresExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MultiStreamAppendTest {

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

    @Test
    void appends_every_stream_and_returns_results_in_input_order() {
        List<AppendResult> results = store.appendMultiStream(List.of(
                StreamAppend.of("zeta-1", ExpectedVersion.noStream(), events(2)),
                StreamAppend.of("mu-1", ExpectedVersion.any(), events(1)),
                StreamAppend.of("alpha-1", ExpectedVersion.noStream(), events(3))));

        assertThat(results).extracting(AppendResult::streamName).containsExactly("zeta-1", "mu-1", "alpha-1");
        assertThat(results).extracting(AppendResult::streamVersion).containsExactly(2L, 1L, 3L);
        // positions ascend in input order, and one transaction wrote them all
        assertThat(results.get(0).lastPosition()).isLessThan(results.get(1).firstPosition());
        assertThat(results.get(1).lastPosition()).isLessThan(results.get(2).firstPosition());
        assertThat(results).extracting(r -> r.firstPosition().transaction()).containsOnly(
                results.get(0).firstPosition().transaction());
    }

    @Test
    void one_failing_condition_rolls_back_every_stream() {
        store.append("held-1", ExpectedVersion.noStream(), events(1));
        long before = eventCount(POSTGRES.dataSource());

        assertThatThrownBy(() -> store.appendMultiStream(List.of(
                StreamAppend.of("first-1", ExpectedVersion.noStream(), events(2)),
                StreamAppend.of("held-1", ExpectedVersion.exactly(5), events(1)),
                StreamAppend.of("third-1", ExpectedVersion.any(), events(1)))))
                .isInstanceOfSatisfying(WrongExpectedVersionException.class, e -> {
                    assertThat(e.streamName()).isEqualTo("held-1");
                    assertThat(e.actualVersion()).isEqualTo(1);
                });

        assertThat(store.streamInfo("first-1")).isEmpty();
        assertThat(store.streamInfo("third-1")).isEmpty();
        assertThat(eventCount(POSTGRES.dataSource())).isEqualTo(before);
    }

    @Test
    void a_duplicate_event_id_rolls_back_every_stream() {
        UUID id = UUID.randomUUID();
        store.append("dup-a", ExpectedVersion.any(), event("A").withId(id));
        long before = eventCount(POSTGRES.dataSource());

        assertThatThrownBy(() -> store.appendMultiStream(List.of(
                StreamAppend.of("dup-b", ExpectedVersion.any(), events(2)),
                StreamAppend.of("dup-c", ExpectedVersion.any(), List.of(event("B").withId(id))))))
                .isInstanceOfSatisfying(DuplicateEventException.class, e -> assertThat(e.eventId()).contains(id));

        assertThat(store.streamInfo("dup-b")).isEmpty();
        assertThat(eventCount(POSTGRES.dataSource())).isEqualTo(before);
    }

    @Test
    void resending_a_committed_event_id_is_a_duplicate_which_retrying_callers_treat_as_success() {
        EventData event = event("Paid").withId(UUID.randomUUID());
        store.append("pay-1", ExpectedVersion.any(), event);
        assertThatThrownBy(() -> store.append("pay-1", ExpectedVersion.any(), event))
                .isInstanceOfSatisfying(DuplicateEventException.class,
                        e -> assertThat(e.eventId()).contains(event.eventId()))
                .hasMessageContaining(event.eventId().toString());
        assertThat(store.readStreamForward("pay-1", 0, 10)).hasSize(1);
    }

    @Test
    void naming_a_stream_twice_is_refused_before_any_database_work() {
        assertThatThrownBy(() -> store.appendMultiStream(List.of(
                StreamAppend.of("twice-1", ExpectedVersion.any(), events(1)),
                StreamAppend.of("twice-1", ExpectedVersion.any(), events(1)))))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("more than once");
        assertThat(store.streamInfo("twice-1")).isEmpty();
    }

    @Test
    void concurrent_multi_stream_appends_in_opposite_orders_do_not_deadlock() throws Exception {
        for (String s : List.of("ab-a", "ab-b", "ab-c")) {
            store.append(s, ExpectedVersion.noStream(), events(1));
        }
        int writers = 9;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            CyclicBarrier barrier = new CyclicBarrier(writers);
            List<Future<List<AppendResult>>> futures = new ArrayList<>();
            List<String> names = List.of("ab-a", "ab-b", "ab-c");
            for (int i = 0; i < writers; i++) {
                int rotation = i % 3;
                futures.add(pool.submit(() -> {
                    barrier.await(10, TimeUnit.SECONDS);
                    List<List<AppendResult>> all = new ArrayList<>();
                    for (int round = 0; round < 10; round++) {
                        List<StreamAppend> ops = new ArrayList<>();
                        for (int k = 0; k < 3; k++) {
                            ops.add(StreamAppend.of(names.get((rotation + k) % 3), ExpectedVersion.any(), events(1)));
                        }
                        all.add(store.appendMultiStream(ops));
                    }
                    return all.get(0);
                }));
            }
            for (Future<List<AppendResult>> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        for (String s : List.of("ab-a", "ab-b", "ab-c")) {
            assertThat(store.streamInfo(s).orElseThrow().version()).isEqualTo(1 + writers * 10);
            assertThat(store.readStreamForward(s, 0, 1000)).extracting(RecordedEvent::position).isSorted();
        }
    }
}
