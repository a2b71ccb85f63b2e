package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.testkit.PostgresExtension;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DESIGN decision 1: many writers whose transactions commit in a different order than they
 * started (pg_sleep between the write and the commit), some rolled back on purpose, while
 * readers tail all streams and one category. Every committed event is read exactly once, in
 * each stream's version order, and no aborted event is ever read. Group commit is on (issue 31):
 * every other writer appends on its own to the same hot streams, so those appends share batches
 * with each other while the in-transaction writers hold stream locks.
 */
class NoSkipOrderingTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final int WRITERS = 16;
    private static final int APPENDS_PER_WRITER = 40;
    private static final int STREAMS = 48;

    private static final List<AppendBatch> BATCHES = new CopyOnWriteArrayList<>();
    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).groupCommit(true).appendBatchListener(BATCHES::add).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    /** A tailing reader of one target, recording every event it reads. */
    private static final class Tail implements Runnable {
        final List<RecordedEvent> read = new CopyOnWriteArrayList<>();
        final BiFunction<GlobalPosition, Integer, List<RecordedEvent>> page;
        final AtomicBoolean stop;

        Tail(BiFunction<GlobalPosition, Integer, List<RecordedEvent>> page, AtomicBoolean stop) {
            this.page = page;
            this.stop = stop;
        }

        @Override
        public void run() {
            GlobalPosition cursor = GlobalPosition.START;
            WakeSignal signal = store.wakeSignal();
            while (!stop.get()) {
                long generation = signal.generation();
                List<RecordedEvent> events = page.apply(cursor, 50);
                read.addAll(events);
                if (!events.isEmpty()) {
                    cursor = events.get(events.size() - 1).position();
                } else {
                    try {
                        signal.awaitAfter(generation, Duration.ofMillis(200));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }
        }
    }

    @Test
    void every_committed_event_is_read_exactly_once_in_stream_order_and_no_aborted_event_is_read()
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        Tail all1 = new Tail(store::readAllForward, stop);
        Tail all2 = new Tail(store::readAllForward, stop);
        Tail category = new Tail((p, n) -> store.readCategoryForward("even", p, n), stop);

        Set<UUID> committed = ConcurrentHashMap.newKeySet();
        Set<UUID> aborted = ConcurrentHashMap.newKeySet();
        Map<UUID, Long> commitOrder = new ConcurrentHashMap<>();
        AtomicLong commits = new AtomicLong();

        ExecutorService readers = Executors.newFixedThreadPool(3);
        ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        try {
            readers.submit(all1);
            readers.submit(all2);
            readers.submit(category);

            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                boolean ownCommits = w % 2 == 1;
                done.add(writers.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    if (ownCommits) {
                        for (int i = 0; i < APPENDS_PER_WRITER; i++) {
                            int s = random.nextInt(STREAMS);
                            String stream = (s % 2 == 0 ? "even-" : "odd-") + s;
                            List<UUID> ids = store.append(stream, ExpectedVersion.any(),
                                    StoreFixture.events(1 + random.nextInt(3))).eventIds();
                            long order = commits.incrementAndGet();
                            ids.forEach(id -> commitOrder.put(id, order));
                            committed.addAll(ids);
                        }
                        return null;
                    }
                    for (int i = 0; i < APPENDS_PER_WRITER; i++) {
                        int s = random.nextInt(STREAMS);
                        String stream = (s % 2 == 0 ? "even-" : "odd-") + s;
                        List<EventData> batch = StoreFixture.events(1 + random.nextInt(3));
                        boolean rollback = random.nextInt(8) == 0;
                        double delaySeconds = random.nextInt(20) / 1000.0;
                        List<UUID> ids = new ArrayList<>();
                        try {
                            store.inTransaction(tx -> {
                                ids.addAll(tx.append(stream, ExpectedVersion.any(), batch).eventIds());
                                try (PreparedStatement sleep = tx.connection().prepareStatement("SELECT pg_sleep(?)")) {
                                    sleep.setDouble(1, delaySeconds);
                                    sleep.execute();
                                }
                                if (rollback) {
                                    throw new RolledBackOnPurpose();
                                }
                                return null;
                            });
                            long order = commits.incrementAndGet();
                            ids.forEach(id -> commitOrder.put(id, order));
                            committed.addAll(ids);
                        } catch (RolledBackOnPurpose expected) {
                            // only the test's own rollback: any other failure of an append fails the test
                            aborted.addAll(ids);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }

            Set<UUID> evenCommitted = new HashSet<>();
            await("both all-stream readers read every committed event (a skipped event stalls them)")
                    .atMost(Duration.ofSeconds(30)).until(() -> all1.read.size() >= committed.size()
                            && all2.read.size() >= committed.size());
            List<RecordedEvent> allEvents = store.allForward(GlobalPosition.START, 500).toList();
            allEvents.stream().filter(e -> e.category().equals("even")).forEach(e -> evenCommitted.add(e.eventId()));
            await("the category reader read every committed event of its category").atMost(Duration.ofSeconds(30))
                    .until(() -> category.read.size() >= evenCommitted.size());
        } finally {
            stop.set(true);
            writers.shutdownNow();
            readers.shutdown();
            assertThat(readers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }

        assertThat(aborted).as("some appends were rolled back on purpose").isNotEmpty();
        assertThat(BATCHES).as("appends that commit on their own shared transactions")
                .anyMatch(b -> b.committed() > 1);
        for (Tail tail : List.of(all1, all2)) {
            assertReadExactlyOnceInOrder(tail.read, committed, aborted);
        }
        Set<UUID> evenCommitted = new HashSet<>();
        for (RecordedEvent e : all1.read) {
            if (e.category().equals("even")) {
                evenCommitted.add(e.eventId());
            }
        }
        assertReadExactlyOnceInOrder(category.read, evenCommitted, aborted);

        // The hazard was real: some transaction committed after one that comes later in the global order,
        // so a reader ordering by commit-insensitive sequence alone would have skipped events.
        List<Long> commitOrderInGlobalOrder = all1.read.stream().map(e -> commitOrder.get(e.eventId())).toList();
        List<Long> sorted = new ArrayList<>(commitOrderInGlobalOrder);
        Collections.sort(sorted);
        assertThat(commitOrderInGlobalOrder).as("commit order differs from global order").isNotEqualTo(sorted);
    }

    /** Thrown by a writer's transaction to roll it back. */
    private static final class RolledBackOnPurpose extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RolledBackOnPurpose() {
            super("rolled back on purpose");
        }
    }

    private static void assertReadExactlyOnceInOrder(List<RecordedEvent> read, Set<UUID> expected, Set<UUID> aborted) {
        List<UUID> ids = read.stream().map(RecordedEvent::eventId).toList();
        assertThat(ids).doesNotHaveDuplicates();
        assertThat(new HashSet<>(ids)).isEqualTo(expected);
        assertThat(ids).doesNotContainAnyElementsOf(aborted);
        assertThat(read).extracting(RecordedEvent::position).isSorted();
        Map<String, Long> lastVersion = new HashMap<>();
        for (RecordedEvent e : read) {
            Long previous = lastVersion.put(e.streamName(), e.streamVersion());
            assertThat(e.streamVersion()).as("version order of %s", e.streamName())
                    .isEqualTo(previous == null ? 1 : previous + 1);
        }
    }
}
