package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How large a group commit must be to start beside batches in flight (issue 31): at least 4 events
 * and at least as many appends as the batches in flight hold on average. Batches are held in flight
 * on purpose: a transaction of the test's inserts the stream rows they would create, without
 * committing, so each waits for it on the stream name's unique index.
 */
class GroupCommitBatchSizeTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    /** A call on a thread of its own, so the test can see where it waits. */
    private record Call(FutureTask<AppendResult> task, Thread thread) {
        static Call start(String name, Callable<AppendResult> work) {
            FutureTask<AppendResult> task = new FutureTask<>(work);
            return new Call(task, Thread.ofPlatform().name("gc-" + name).start(task));
        }

        AppendResult get() throws Exception {
            return task.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }

        boolean queued() {
            return Arrays.stream(thread.getStackTrace()).anyMatch(f -> f.getClassName().endsWith("AppendBatcher")
                    && f.getMethodName().equals("await")) && !task.isDone();
        }
    }

    private static long appendsWaitingForTheHolder() {
        return StoreFixture.count(POSTGRES.dataSource(), "SELECT count(*) FROM pg_stat_activity"
                + " WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'transactionid'");
    }

    @Test
    void beside_batches_in_flight_a_batch_starts_only_once_as_large_as_they_are_on_average() throws Exception {
        List<AppendBatch> batches = new CopyOnWriteArrayList<>();
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).maxConcurrentAppendBatches(3)
                .appendBatchListener(batches::add).build();
                Connection holder = POSTGRES.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (Statement s = holder.createStatement()) {
                s.execute("INSERT INTO waymark.streams (stream_name, category, stream_hash)"
                        + " VALUES ('held-1', 'held', 0), ('held-2', 'held', 0)");
            }
            // in flight: a lone append, then a batch of 4 appends beside it (4 events), both held
            Call lone = Call.start("lone", () -> store.append("held-1", ExpectedVersion.any(), events(1)));
            await("the lone append waits for the holder").atMost(WAIT).until(() -> appendsWaitingForTheHolder() == 1);
            List<Call> held = new ArrayList<>();
            for (String stream : List.of("size-1", "size-2", "size-3", "held-2")) {
                held.add(Call.start(stream, () -> store.append(stream, ExpectedVersion.any(), events(1))));
            }
            await("the batch of 4 waits for the holder").atMost(WAIT).until(() -> appendsWaitingForTheHolder() == 2);

            // 5 appends in 2 batches in flight: a third batch needs 4 events and 3 appends
            Call big = Call.start("big", () -> store.append("size-big", ExpectedVersion.any(), events(4)));
            await("4 events in one append wait").during(Duration.ofMillis(300)).atMost(WAIT).until(big::queued);
            Call second = Call.start("second", () -> store.append("size-x", ExpectedVersion.any(), events(1)));
            await("2 appends wait").during(Duration.ofMillis(300)).atMost(WAIT).until(second::queued);
            AppendResult third = Call.start("third", () -> store.append("size-y", ExpectedVersion.any(), events(1)))
                    .get();

            assertThat(big.get().firstPosition().transaction()).as("one batch of 3 appends beside the held ones")
                    .isEqualTo(third.firstPosition().transaction())
                    .isEqualTo(second.get().firstPosition().transaction());
            assertThat(lone.task().isDone()).as("the held appends still wait").isFalse();
            holder.rollback();
            assertThat(lone.get().streamVersion()).isEqualTo(1);
            for (Call call : held) {
                assertThat(call.get().streamVersion()).isEqualTo(1);
            }
        }
        assertThat(batches).extracting(AppendBatch::appends).containsExactlyInAnyOrder(1, 4, 3);
    }
}
