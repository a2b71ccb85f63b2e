package dev.waymark.store;

import static dev.waymark.store.StoreFixture.event;
import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.testkit.PostgresExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The expected-version matrix of ExpectedVersion's javadoc, against missing, live and soft-deleted streams. */
class ExpectedVersionTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static EventStore store;
    private static final AtomicInteger streams = new AtomicInteger();

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static String fresh() {
        return "order-" + streams.incrementAndGet();
    }

    private static String live(int events) {
        String name = fresh();
        store.append(name, ExpectedVersion.noStream(), events(events));
        return name;
    }

    private static String deleted() {
        String name = live(2);
        assertThat(store.softDelete(name)).isTrue();
        return name;
    }

    // ---- any

    @Test
    void any_creates_a_missing_stream_at_version_one() {
        AppendResult result = store.append(fresh(), ExpectedVersion.any(), event("A"));
        assertThat(result.streamVersion()).isEqualTo(1);
    }

    @Test
    void any_appends_to_a_live_stream_whatever_its_version() {
        String name = live(3);
        assertThat(store.append(name, ExpectedVersion.any(), events(2)).streamVersion()).isEqualTo(5);
    }

    @Test
    void any_on_a_deleted_stream_is_stream_not_found() {
        String name = deleted();
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.any(), event("A")))
                .isInstanceOfSatisfying(StreamNotFoundException.class, e -> {
                    assertThat(e.isDeleted()).isTrue();
                    assertThat(e.streamName()).isEqualTo(name);
                });
        assertThat(store.streamInfo(name).orElseThrow().version()).isEqualTo(2);
    }

    // ---- noStream

    @Test
    void no_stream_creates_a_missing_stream() {
        String name = fresh();
        AppendResult result = store.append(name, ExpectedVersion.noStream(), events(3));
        assertThat(result.streamVersion()).isEqualTo(3);
        assertThat(result.eventIds()).hasSize(3);
        assertThat(result.firstPosition()).isLessThan(result.lastPosition());
    }

    @Test
    void no_stream_on_a_live_stream_is_already_exists_with_the_real_version() {
        String name = live(4);
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.noStream(), event("A")))
                .isInstanceOfSatisfying(StreamAlreadyExistsException.class,
                        e -> assertThat(e.actualVersion()).isEqualTo(4))
                .hasMessageContaining(name).hasMessageContaining("version 4");
    }

    @Test
    void no_stream_on_a_deleted_stream_is_already_exists_because_the_name_stays_reserved() {
        String name = deleted();
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.noStream(), event("A")))
                .isInstanceOf(StreamAlreadyExistsException.class).hasMessageContaining("soft-deleted");
    }

    // ---- streamExists

    @Test
    void stream_exists_on_a_missing_stream_is_not_found_and_creates_nothing() {
        String name = fresh();
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.streamExists(), event("A")))
                .isInstanceOfSatisfying(StreamNotFoundException.class, e -> assertThat(e.isDeleted()).isFalse());
        assertThat(store.streamInfo(name)).isEmpty();
    }

    @Test
    void stream_exists_appends_to_a_live_stream() {
        String name = live(1);
        assertThat(store.append(name, ExpectedVersion.streamExists(), event("A")).streamVersion()).isEqualTo(2);
    }

    @Test
    void stream_exists_on_a_deleted_stream_is_not_found() {
        String name = deleted();
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.streamExists(), event("A")))
                .isInstanceOfSatisfying(StreamNotFoundException.class, e -> assertThat(e.isDeleted()).isTrue());
    }

    // ---- exactly

    @Test
    void exactly_on_a_missing_stream_is_wrong_version_reporting_no_stream() {
        String name = fresh();
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.exactly(1), event("A")))
                .isInstanceOfSatisfying(WrongExpectedVersionException.class, e -> {
                    assertThat(e.expectedVersion()).isOne();
                    assertThat(e.actualVersion()).isEqualTo(-1);
                })
                .hasMessageContaining("does not exist");
        assertThat(store.streamInfo(name)).isEmpty();
    }

    @Test
    void exactly_matching_appends() {
        String name = live(2);
        assertThat(store.append(name, ExpectedVersion.exactly(2), events(3)).streamVersion()).isEqualTo(5);
    }

    @Test
    void exactly_mismatching_is_wrong_version_reporting_the_real_version() {
        String name = live(2);
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.exactly(7), event("A")))
                .isInstanceOfSatisfying(WrongExpectedVersionException.class, e -> {
                    assertThat(e.expectedVersion()).isEqualTo(7);
                    assertThat(e.actualVersion()).isEqualTo(2);
                })
                .hasMessageContaining("expected version 7 but the stream is at version 2");
    }

    @Test
    void exactly_on_a_deleted_stream_is_wrong_version_even_when_the_version_matches() {
        String name = deleted();
        assertThatThrownBy(() -> store.append(name, ExpectedVersion.exactly(2), event("A")))
                .isInstanceOfSatisfying(WrongExpectedVersionException.class, e -> {
                    assertThat(e.isDeleted()).isTrue();
                    assertThat(e.actualVersion()).isEqualTo(2);
                });
    }

    @Test
    void a_negative_expected_version_is_refused_when_built() {
        assertThatThrownBy(() -> ExpectedVersion.exactly(-1))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("must be >= 1");
    }

    @Test
    void exactly_zero_which_could_never_succeed_is_refused_pointing_to_no_stream() {
        // before: accepted, then every append failed (a missing stream is no version, a live one is >= 1)
        assertThatThrownBy(() -> ExpectedVersion.exactly(0)).isInstanceOf(InvalidInputException.class)
                .hasMessage("expected version must be >= 1 (stream versions start at 1), got 0; for a stream that"
                        + " must not exist yet use ExpectedVersion.noStream()");
    }

    @Test
    void undelete_restores_appends_and_reads() {
        String name = deleted();
        assertThat(store.readStreamForward(name, 0, 10)).isEmpty();
        assertThat(store.undelete(name)).isTrue();
        assertThat(store.undelete(name)).isFalse();
        assertThat(store.append(name, ExpectedVersion.exactly(2), event("A")).streamVersion()).isEqualTo(3);
        assertThat(store.readStreamForward(name, 0, 10)).extracting(RecordedEvent::streamVersion).containsExactly(1L,
                2L, 3L);
    }

    // ---- concurrency

    @Test
    void of_two_concurrent_no_stream_writers_exactly_one_wins() throws Exception {
        for (int round = 0; round < 10; round++) {
            String name = fresh();
            List<Object> outcomes = race(() -> store.append(name, ExpectedVersion.noStream(), events(2)),
                    () -> store.append(name, ExpectedVersion.noStream(), events(2)));
            assertThat(outcomes).filteredOn(AppendResult.class::isInstance).hasSize(1);
            assertThat(outcomes).filteredOn(StreamAlreadyExistsException.class::isInstance).hasSize(1);
            assertThat(store.streamInfo(name).orElseThrow().version()).isEqualTo(2);
        }
    }

    @Test
    void of_two_concurrent_exact_writers_exactly_one_wins() throws Exception {
        for (int round = 0; round < 10; round++) {
            String name = live(1);
            List<Object> outcomes = race(() -> store.append(name, ExpectedVersion.exactly(1), event("A")),
                    () -> store.append(name, ExpectedVersion.exactly(1), event("B")));
            assertThat(outcomes).filteredOn(AppendResult.class::isInstance).hasSize(1);
            assertThat(outcomes).filteredOn(WrongExpectedVersionException.class::isInstance)
                    .singleElement()
                    .satisfies(e -> assertThat(((WrongExpectedVersionException) e).actualVersion()).isEqualTo(2));
            assertThat(store.readStreamForward(name, 0, 10)).hasSize(2);
        }
    }

    @Test
    void concurrent_any_writers_to_one_stream_get_contiguous_versions() throws Exception {
        String name = "invoice-payment";
        int writers = 24;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            CyclicBarrier start = new CyclicBarrier(writers);
            List<Future<AppendResult>> futures = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                futures.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    return store.append(name, ExpectedVersion.any(), event("A"));
                }));
            }
            List<Long> versions = new ArrayList<>();
            for (Future<AppendResult> f : futures) {
                versions.add(f.get(30, TimeUnit.SECONDS).streamVersion());
            }
            assertThat(versions).containsExactlyInAnyOrderElementsOf(
                    java.util.stream.LongStream.rangeClosed(1, writers).boxed().toList());
            List<RecordedEvent> read = store.readStreamForward(name, 0, 100);
            assertThat(read).extracting(RecordedEvent::streamVersion)
                    .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, writers).boxed().toList());
            assertThat(read).extracting(RecordedEvent::position).isSorted();
        } finally {
            pool.shutdownNow();
        }
    }

    private static List<Object> race(Callable<AppendResult> a, Callable<AppendResult> b) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CyclicBarrier barrier = new CyclicBarrier(2);
            List<Future<Object>> futures = new ArrayList<>();
            for (Callable<AppendResult> c : List.of(a, b)) {
                futures.add(pool.submit(() -> {
                    barrier.await(10, TimeUnit.SECONDS);
                    try {
                        return c.call();
                    } catch (StoreException e) {
                        return e;
                    }
                }));
            }
            List<Object> outcomes = new ArrayList<>();
            for (Future<Object> f : futures) {
                outcomes.add(f.get(30, TimeUnit.SECONDS));
            }
            return outcomes;
        } finally {
            pool.shutdownNow();
        }
    }
}
