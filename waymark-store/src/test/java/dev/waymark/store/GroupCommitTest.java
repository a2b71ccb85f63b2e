package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Group commit (issue 31): appends that arrive while another is in flight are committed together,
 * and each caller gets its own outcome. Batches are formed on purpose: a first append waits for a
 * stream lock the test holds, the appends under test queue up behind it (each thread seen parked
 * in the batcher), and releasing the lock lets them commit as one batch, in the order they queued.
 */
class GroupCommitTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final List<AppendBatch> BATCHES = new CopyOnWriteArrayList<>();
    /** One batch in flight at a time: what queues behind the gate commits as one batch. */
    private static EventStore store;
    /** The default number of batches in flight. */
    private static EventStore parallel;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).maxConcurrentAppendBatches(1)
                .appendBatchListener(BATCHES::add).build();
        parallel = EventStore.builder(POSTGRES.dataSource()).appendBatchListener(BATCHES::add).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
        parallel.close();
    }

    @BeforeEach
    void forgetBatches() {
        BATCHES.clear();
    }

    /** A call on a thread of its own, so the test can see where it waits. */
    private static final class Call<T> {
        final FutureTask<T> task;
        final Thread thread;

        Call(String name, Callable<T> work) {
            task = new FutureTask<>(work);
            thread = Thread.ofPlatform().name("gc-" + name).start(task);
        }

        T get() throws Exception {
            try {
                return task.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
        }

        Throwable failure() throws Exception {
            try {
                task.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                return null;
            } catch (ExecutionException e) {
                return e.getCause();
            }
        }

        boolean queued() {
            return Arrays.stream(thread.getStackTrace())
                    .anyMatch(f -> f.getClassName().endsWith("AppendBatcher") && f.getMethodName().equals("await"));
        }
    }

    /**
     * Holds the lock of stream {@code gate} in a transaction of the test's, and starts an append to
     * it that leads a batch of one and waits for the lock: every append started before
     * {@link #open()} queues behind it.
     */
    private static final class Gate implements AutoCloseable {
        final Connection holder;
        final Call<AppendResult> leader;

        Gate(String gate) throws Exception {
            this(store, gate);
        }

        Gate(EventStore on, String gate) throws Exception {
            holder = POSTGRES.dataSource().getConnection();
            holder.setAutoCommit(false);
            on.lockStreams(holder, List.of(gate));
            leader = new Call<>("leader", () -> on.append(gate, ExpectedVersion.any(), events(1)));
            await("the leading append waits for the gate's lock").atMost(WAIT).until(() -> StoreFixture.count(
                    POSTGRES.dataSource(), "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())") == 1);
        }

        /** Starts {@code work} and returns once it waits in the queue behind the gate. */
        <T> Call<T> queue(String name, Callable<T> work) {
            Call<T> call = new Call<>(name, work);
            await(name + " waits for its batch").atMost(WAIT).until(call::queued);
            return call;
        }

        void open() throws Exception {
            holder.rollback();
            assertThat(leader.get().streamVersion()).isPositive();
        }

        @Override
        public void close() throws Exception {
            holder.close();
        }
    }

    private static AppendBatch batchOf(int appends) {
        await("a batch of " + appends + " appends ended").atMost(WAIT)
                .until(() -> BATCHES.stream().anyMatch(b -> b.appends() == appends));
        return BATCHES.stream().filter(b -> b.appends() == appends).findFirst().orElseThrow();
    }

    @Test
    void a_version_conflict_fails_only_its_caller_and_the_others_of_the_batch_commit() throws Exception {
        store.append("conflict-b", ExpectedVersion.noStream(), events(1));
        try (Gate gate = new Gate("gate-conflict")) {
            Call<AppendResult> first = gate.queue("first",
                    () -> store.append("conflict-a", ExpectedVersion.any(), events(2)));
            Call<AppendResult> wrong = gate.queue("wrong", () -> store.append("conflict-b", ExpectedVersion.exactly(5),
                    events(1)));
            Call<AppendResult> exists = gate.queue("exists",
                    () -> store.append("conflict-b", ExpectedVersion.noStream(),
                            events(1)));
            Call<AppendResult> last = gate.queue("last", () -> store.append("conflict-c", ExpectedVersion.noStream(),
                    events(1)));
            gate.open();

            assertThat(first.get().streamVersion()).isEqualTo(2);
            assertThat(last.get().streamVersion()).isEqualTo(1);
            assertThat(wrong.failure()).isInstanceOfSatisfying(WrongExpectedVersionException.class, e -> {
                assertThat(e.expectedVersion()).isEqualTo(5);
                assertThat(e.actualVersion()).isEqualTo(1);
            });
            assertThat(exists.failure()).isInstanceOf(StreamAlreadyExistsException.class);
            assertThat(first.get().firstPosition().transaction()).as("one transaction")
                    .isEqualTo(last.get().firstPosition().transaction());
        }
        AppendBatch batch = batchOf(4);
        assertThat(batch.committed()).isEqualTo(2);
        assertThat(batch.appendedAlone()).isZero();
        assertThat(batch.events()).isEqualTo(5);
        assertThat(store.readStreamForward("conflict-b", 0, 10)).hasSize(1);
    }

    @Test
    void a_bad_event_fails_only_its_caller_and_the_others_of_the_batch_commit() throws Exception {
        UUID stored = store.append("bad-x", ExpectedVersion.any(), events(1)).eventIds().get(0);
        try (Gate gate = new Gate("gate-bad")) {
            Call<AppendResult> first = gate.queue("first",
                    () -> store.append("bad-a", ExpectedVersion.any(), events(1)));
            // an event id already stored (in another stream) reaches the batch and is refused there
            Call<AppendResult> duplicate = gate.queue("duplicate", () -> store.append("bad-b", ExpectedVersion.any(),
                    List.of(EventData.json("Dup", "{}").withId(stored))));
            Call<AppendResult> last = gate.queue("last", () -> store.append("bad-c", ExpectedVersion.any(), events(1)));
            gate.open();

            assertThat(first.get().streamVersion()).isEqualTo(1);
            assertThat(last.get().streamVersion()).isEqualTo(1);
            assertThat(duplicate.failure()).isInstanceOfSatisfying(DuplicateEventException.class,
                    e -> assertThat(e.eventId()).contains(stored));
        }
        AppendBatch batch = batchOf(3);
        assertThat(batch.committed()).isEqualTo(2);
        assertThat(batch.appendedAlone()).isEqualTo(1);
        assertThat(store.streamInfo("bad-b")).isEmpty();
        // invalid JSON never reaches a batch: it fails its own caller before anything is sent
        assertThatThrownBy(() -> store.append("bad-d", ExpectedVersion.any(), EventData.json("Bad", "{nope")))
                .isInstanceOf(InvalidInputException.class);
    }

    @Test
    void two_appends_to_one_stream_in_one_batch_get_consecutive_versions_in_call_order() throws Exception {
        store.append("chain-1", ExpectedVersion.noStream(), events(1));
        try (Gate gate = new Gate("gate-chain")) {
            Call<AppendResult> second = gate.queue("second", () -> store.append("chain-1", ExpectedVersion.exactly(1),
                    events(2)));
            Call<AppendResult> third = gate.queue("third", () -> store.append("chain-1", ExpectedVersion.exactly(3),
                    events(1)));
            Call<AppendResult> stale = gate.queue("stale", () -> store.append("chain-1", ExpectedVersion.exactly(3),
                    events(1)));
            Call<AppendResult> anyVersion = gate.queue("any", () -> store.append("chain-1", ExpectedVersion.any(),
                    events(1)));
            gate.open();

            assertThat(second.get().streamVersion()).isEqualTo(3);
            assertThat(third.get().streamVersion()).as("expected version 3 holds after the batch's first append")
                    .isEqualTo(4);
            assertThat(stale.failure()).as("expected version 3 no longer holds after the batch's second append")
                    .isInstanceOfSatisfying(WrongExpectedVersionException.class,
                            e -> assertThat(e.actualVersion()).isEqualTo(4));
            assertThat(anyVersion.get().streamVersion()).isEqualTo(5);
            assertThat(second.get().lastPosition()).isLessThan(third.get().firstPosition());
            assertThat(third.get().lastPosition()).isLessThan(anyVersion.get().firstPosition());
        }
        assertThat(batchOf(4).committed()).isEqualTo(3);
        List<RecordedEvent> stream = store.readStreamForward("chain-1", 0, 10);
        assertThat(stream).extracting(RecordedEvent::streamVersion).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(stream).extracting(RecordedEvent::position).isSorted();
        assertThat(store.readCategoryForward("chain", GlobalPosition.START, 10)).isEqualTo(stream);
    }

    @Test
    void a_multi_stream_append_whose_second_condition_fails_writes_nothing_while_its_neighbours_commit()
            throws Exception {
        try (Gate gate = new Gate("gate-multi")) {
            Call<AppendResult> before = gate.queue("before", () -> store.append("multi-a", ExpectedVersion.any(),
                    events(1)));
            Call<List<AppendResult>> multi = gate.queue("multi", () -> store.appendMultiStream(List.of(
                    StreamAppend.of("multi-a", ExpectedVersion.exactly(1), events(1)),
                    StreamAppend.of("multi-b", ExpectedVersion.streamExists(), events(1)))));
            Call<List<AppendResult>> both = gate.queue("both", () -> store.appendMultiStream(List.of(
                    StreamAppend.of("multi-a", ExpectedVersion.exactly(1), events(1)),
                    StreamAppend.of("multi-c", ExpectedVersion.noStream(), events(2)))));
            gate.open();

            assertThat(before.get().streamVersion()).isEqualTo(1);
            assertThat(multi.failure()).isInstanceOf(StreamNotFoundException.class)
                    .hasMessageContaining("multi-b");
            assertThat(both.get()).extracting(AppendResult::streamVersion).containsExactly(2L, 2L);
        }
        assertThat(batchOf(3).committed()).isEqualTo(2);
        assertThat(store.streamInfo("multi-b")).isEmpty();
    }

    @Test
    void beside_a_batch_in_flight_only_a_full_one_starts_and_an_append_to_its_stream_waits_for_it() throws Exception {
        try (Gate gate = new Gate(parallel, "gate-full")) {
            Call<AppendResult> sameStream = gate.queue("same-stream", () -> parallel.append("gate-full",
                    ExpectedVersion.any(), events(1)));
            Call<AppendResult> small = gate.queue("small", () -> parallel.append("full-a", ExpectedVersion.any(),
                    events(2)));
            await("a small batch waits for the batch in flight").during(Duration.ofMillis(300)).atMost(WAIT)
                    .until(small::queued);
            // 2 events more make the waiting batch worth a transaction of its own, so it goes while the
            // gate's batch still waits; the append to the gate's stream stays queued behind that one
            AppendResult large = new Call<>("large", () -> parallel.append("full-b", ExpectedVersion.any(),
                    events(2))).get();
            assertThat(large.streamVersion()).isEqualTo(2);
            assertThat(small.get().firstPosition().transaction()).isEqualTo(large.firstPosition().transaction());
            assertThat(small.get().streamVersion()).isEqualTo(2);
            assertThat(sameStream.queued()).isTrue();
            gate.open();

            assertThat(sameStream.get().streamVersion()).as("after the gate's append, in call order").isEqualTo(2);
        }
        assertThat(batchOf(2).committed()).isEqualTo(2);
        await("the append to the gate's stream ended").atMost(WAIT).until(() -> BATCHES.size() == 3);
    }

    @Test
    void an_append_interrupted_while_it_waits_for_its_batch_fails_and_writes_nothing() throws Exception {
        try (Gate gate = new Gate("gate-interrupt")) {
            Call<Boolean> interrupted = gate.queue("interrupted", () -> {
                try {
                    store.append("interrupt-1", ExpectedVersion.any(), events(1));
                    return false;
                } catch (StoreException e) {
                    assertThat(e).hasMessageContaining("interrupted while it waited for its group commit");
                    return Thread.currentThread().isInterrupted();
                }
            });
            Call<AppendResult> other = gate.queue("other", () -> store.append("interrupt-2", ExpectedVersion.any(),
                    events(1)));
            interrupted.thread.interrupt();
            assertThat(interrupted.get()).as("failed, its interrupt flag kept").isTrue();
            gate.open();
            assertThat(other.get().streamVersion()).isEqualTo(1);
        }
        assertThat(store.streamInfo("interrupt-1")).isEmpty();
    }

    @Test
    void conditions_on_a_deleted_stream_fail_in_a_batch_as_they_do_alone() throws Exception {
        store.append("deleted-1", ExpectedVersion.noStream(), events(2));
        assertThat(store.softDelete("deleted-1")).isTrue();
        try (Gate gate = new Gate("gate-deleted")) {
            Call<AppendResult> anyVersion = gate.queue("any", () -> store.append("deleted-1", ExpectedVersion.any(),
                    events(1)));
            Call<AppendResult> exactly = gate.queue("exactly",
                    () -> store.append("deleted-1", ExpectedVersion.exactly(2),
                            events(1)));
            Call<AppendResult> exists = gate.queue("exists", () -> store.append("deleted-1",
                    ExpectedVersion.streamExists(), events(1)));
            Call<AppendResult> fresh = gate.queue("fresh", () -> store.append("deleted-2", ExpectedVersion.noStream(),
                    events(1)));
            gate.open();

            assertThat(anyVersion.failure()).isInstanceOfSatisfying(StreamNotFoundException.class,
                    e -> assertThat(e.isDeleted()).isTrue());
            assertThat(exactly.failure()).isInstanceOfSatisfying(WrongExpectedVersionException.class, e -> {
                assertThat(e.isDeleted()).isTrue();
                assertThat(e.actualVersion()).isEqualTo(2);
            });
            assertThat(exists.failure()).isInstanceOfSatisfying(StreamNotFoundException.class,
                    e -> assertThat(e.isDeleted()).isTrue());
            assertThat(fresh.get().streamVersion()).isEqualTo(1);
        }
        assertThat(batchOf(4).committed()).isEqualTo(1);
    }

    @Test
    void a_lone_append_goes_at_once_in_a_batch_of_its_own() {
        store.append("lone-1", ExpectedVersion.any(), events(3));

        assertThat(BATCHES).singleElement().satisfies(b -> {
            assertThat(b.appends()).isEqualTo(1);
            assertThat(b.committed()).isEqualTo(1);
            assertThat(b.longestWait()).isLessThan(Duration.ofMillis(50));
        });
    }

    @Test
    void with_group_commit_off_every_append_has_a_transaction_of_its_own() throws Exception {
        List<AppendBatch> seen = new CopyOnWriteArrayList<>();
        try (EventStore plain = EventStore.builder(POSTGRES.dataSource()).groupCommit(false)
                .appendBatchListener(seen::add).build()) {
            List<Call<AppendResult>> calls = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                String stream = "plain-" + i;
                calls.add(new Call<>("plain-" + i, () -> plain.append(stream, ExpectedVersion.any(), events(1))));
            }
            List<Long> transactions = new ArrayList<>();
            for (Call<AppendResult> call : calls) {
                transactions.add(call.get().firstPosition().transaction());
            }
            assertThat(transactions).doesNotHaveDuplicates();
        }
        assertThat(seen).isEmpty();
    }

    @Test
    void the_builder_refuses_bounds_out_of_range() {
        assertThatThrownBy(() -> EventStore.builder(POSTGRES.dataSource()).maxAppendBatchSize(0).build())
                .isInstanceOf(StoreConfigException.class).hasMessageContaining("maxAppendBatchSize")
                .hasMessageContaining("got 0");
        assertThatThrownBy(() -> EventStore.builder(POSTGRES.dataSource()).maxAppendBatchBytes(100).build())
                .isInstanceOf(StoreConfigException.class).hasMessageContaining("maxAppendBatchBytes")
                .hasMessageContaining("got 100");
        assertThatThrownBy(() -> EventStore.builder(POSTGRES.dataSource()).maxConcurrentAppendBatches(65).build())
                .isInstanceOf(StoreConfigException.class).hasMessageContaining("maxConcurrentAppendBatches")
                .hasMessageContaining("got 65");
        assertThatThrownBy(() -> EventStore.builder(POSTGRES.dataSource()).appendBatchListener(null).build())
                .isInstanceOf(StoreConfigException.class).hasMessageContaining("appendBatchListener");
    }
}
