package dev.waymark.workflow.internal;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link StepBatcher#close}: a flusher stuck in a statement does not hold the close up past its
 * bound; the entries still queued go back to their runs, and the stuck batch still gets its outcome
 * once the statement ends.
 */
class StepBatcherCloseTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static Instances instances;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        instances = new Instances(POSTGRES.dataSource(), store.schema());
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static long started(String id) {
        return instances.start("close", id, "1", UUID.randomUUID(), null, "me", Duration.ofMinutes(5)).epoch();
    }

    @Test
    void close_returns_within_its_bound_while_a_flusher_is_stuck_and_hands_the_queue_back() throws Exception {
        long stuck = started("stuck");
        long other = started("other");
        StepBatcher batcher = new StepBatcher(instances, 1, 64, "close-test");
        try (Connection blocker = POSTGRES.dataSource().getConnection()) {
            blocker.setAutoCommit(false);
            try (PreparedStatement lock = blocker.prepareStatement("SELECT 1 FROM \"" + store.schema()
                    + "\".workflows WHERE name = 'close' AND id = 'stuck' FOR UPDATE")) {
                lock.executeQuery().close(); // the completion's UPDATE of this row waits for it
            }
            CompletableFuture<BatchJournal.Outcome> completion = CompletableFuture.supplyAsync(
                    () -> batcher.journal(JournalWrite.completion("close", "stuck", 0,
                            Ids.entryId("close", "stuck", 0, "__completed__"), "1", stuck)));
            await().atMost(WAIT).until(StepBatcherCloseTest::aBatchWaitsForTheRowLock);
            CompletableFuture<BatchJournal.Outcome> queued = CompletableFuture.supplyAsync(
                    () -> batcher.journal(JournalWrite.step("close", "other", 0,
                            Ids.entryId("close", "other", 0, "s"), "{\"step\":\"s\",\"result\":1}", other)));
            await().atMost(WAIT).until(() -> batcher.queued() == 1);

            long before = System.nanoTime();
            batcher.close(Duration.ofMillis(300));
            assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(5));
            assertThat(queued.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isNull(); // its run journals it alone
            assertThat(completion).isNotDone();
            blocker.rollback();
            assertThat(completion.get(WAIT.toMillis(), TimeUnit.MILLISECONDS).kind()).isEqualTo("appended");
        }
    }

    private static boolean aBatchWaitsForTheRowLock() throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                        + " WHERE wait_event_type = 'Lock' AND query LIKE '%wf_journal%' AND datname = current_database()");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1) == 1;
        }
    }
}
