package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
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
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DESIGN decision 1 with re-runs: writers on a few hot streams, some of which take a row lock
 * (SELECT ... FOR UPDATE, which gives the transaction its id) before appending, so that
 * {@code inTransaction} runs their work again with the stream locks taken first. Others append
 * first, or append to two streams one after the other. Tailing readers see every committed event
 * once, each stream's versions in order with none skipped, and never a rolled-back one.
 */
class RerunOrderingTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final int WRITERS = 10;
    private static final int TRANSACTIONS_PER_WRITER = 25;
    private static final int STREAMS = 3;

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        POSTGRES.execute("CREATE TABLE slots (id int PRIMARY KEY, n int NOT NULL DEFAULT 0);"
                + " INSERT INTO slots (id) SELECT generate_series(0, " + (WRITERS - 1) + ")");
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static void sleep(Connection c, double seconds) throws SQLException {
        try (PreparedStatement p = c.prepareStatement("SELECT pg_sleep(?)")) {
            p.setDouble(1, seconds);
            p.execute();
        }
    }

    private static void lockSlot(Connection c, int slot) throws SQLException {
        try (PreparedStatement p = c.prepareStatement("SELECT n FROM slots WHERE id = ? FOR UPDATE")) {
            p.setInt(1, slot);
            p.executeQuery().close();
        }
    }

    @Test
    void re_run_appends_keep_every_streams_versions_in_global_order_with_nothing_skipped() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<RecordedEvent> read1 = new CopyOnWriteArrayList<>();
        List<RecordedEvent> read2 = new CopyOnWriteArrayList<>();
        Set<UUID> committed = ConcurrentHashMap.newKeySet();
        Set<UUID> aborted = ConcurrentHashMap.newKeySet();
        AtomicInteger reruns = new AtomicInteger();

        ExecutorService readers = Executors.newFixedThreadPool(2);
        ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        try {
            readers.submit(() -> tail(read1, stop));
            readers.submit(() -> tail(read2, stop));
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int slot = w;
                done.add(writers.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < TRANSACTIONS_PER_WRITER; i++) {
                        String first = "hot-" + random.nextInt(STREAMS);
                        String second = "hot-" + random.nextInt(STREAMS);
                        boolean lockFirst = random.nextInt(3) == 0; // gets its xid before any stream lock
                        boolean twoAppends = random.nextInt(4) == 0;
                        boolean rollback = random.nextInt(10) == 0;
                        double before = random.nextInt(6) / 1000.0;
                        double after = random.nextInt(6) / 1000.0;
                        List<UUID> ids = new ArrayList<>();
                        AtomicInteger runs = new AtomicInteger();
                        try {
                            store.inTransaction(tx -> {
                                runs.incrementAndGet();
                                ids.clear(); // a re-run's ids replace the refused run's
                                if (lockFirst) {
                                    lockSlot(tx.connection(), slot);
                                    sleep(tx.connection(), before); // an appender may pass it meanwhile
                                }
                                ids.addAll(tx.append(first, ExpectedVersion.any(), StoreFixture.events(1)).eventIds());
                                if (twoAppends) {
                                    sleep(tx.connection(), before);
                                    ids.addAll(tx.append(second, ExpectedVersion.any(), StoreFixture.events(2))
                                            .eventIds());
                                }
                                sleep(tx.connection(), after);
                                if (rollback) {
                                    throw new RolledBackOnPurpose();
                                }
                                return null;
                            });
                            committed.addAll(ids);
                        } catch (RolledBackOnPurpose expected) {
                            aborted.addAll(ids);
                        }
                        if (runs.get() > 1) {
                            reruns.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
            await("both readers read every committed event (a skipped event stalls them)")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> read1.size() >= committed.size() && read2.size() >= committed.size());
        } finally {
            stop.set(true);
            writers.shutdownNow();
            readers.shutdown();
            assertThat(readers.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }

        assertThat(reruns.get()).as("some works ran twice").isPositive();
        assertThat(aborted).as("some transactions were rolled back on purpose").isNotEmpty();
        for (List<RecordedEvent> read : List.of(read1, read2)) {
            List<UUID> ids = read.stream().map(RecordedEvent::eventId).toList();
            assertThat(ids).doesNotHaveDuplicates();
            assertThat(new HashSet<>(ids)).isEqualTo(committed);
            assertThat(read).extracting(RecordedEvent::position).isSorted();
            Map<String, Long> lastVersion = new HashMap<>();
            for (RecordedEvent e : read) {
                Long previous = lastVersion.put(e.streamName(), e.streamVersion());
                assertThat(e.streamVersion()).as("version order of %s in global order", e.streamName())
                        .isEqualTo(previous == null ? 1 : previous + 1);
            }
        }
    }

    private static void tail(List<RecordedEvent> read, AtomicBoolean stop) {
        GlobalPosition cursor = GlobalPosition.START;
        WakeSignal signal = store.wakeSignal();
        while (!stop.get()) {
            long generation = signal.generation();
            List<RecordedEvent> events = store.readAllForward(cursor, 50);
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

    /** Thrown by a writer's transaction to roll it back. */
    private static final class RolledBackOnPurpose extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RolledBackOnPurpose() {
            super("rolled back on purpose");
        }
    }
}
