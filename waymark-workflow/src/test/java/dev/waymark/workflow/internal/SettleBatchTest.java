package dev.waymark.workflow.internal;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.store.InvalidInputException;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code wf_settle_awakeables} and the shared settlements over it: each settlement of a batch gets
 * the outcome it would get alone (first settlement wins, in batch order), an instance locked
 * elsewhere is skipped unwritten and settled alone once its lock is free, the settlements of
 * concurrent callers commit in one transaction, and a batch that fails as a whole fails none of
 * its neighbours.
 */
class SettleBatchTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final String NAME = "settle";

    private static EventStore store;
    private static Instances instances;
    private static Awakeables awakeables;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        instances = new Instances(POSTGRES.dataSource(), store.schema());
        awakeables = instances.awakeables();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    /** A suspended instance {@code id} waiting on a new pending awakeable, whose id is returned. */
    private static UUID pending(String id) throws SQLException {
        if (instances.find(NAME, id).isEmpty()) {
            instances.start(NAME, id, "1", UUID.randomUUID(), null, null, Duration.ZERO);
        }
        UUID awakeable = UUID.randomUUID();
        execute("UPDATE waymark.workflows SET status = 'suspended', waiting_on = 'awakeable' WHERE name = ? AND id = ?",
                NAME, id);
        execute("INSERT INTO waymark.workflow_awakeables (awakeable_id, name, id, generation, label)"
                + " VALUES (?::uuid, ?, ?, 0, 'go')", awakeable.toString(), NAME, id);
        return awakeable;
    }

    private static SettleBatch.Settlement complete(UUID awakeable, String json) {
        return new SettleBatch.Settlement(awakeable, "completed", json, null);
    }

    private static SettleBatch.Done done(SqlOutcomes.Settle outcome, String owner) {
        return new SettleBatch.Done(
                new Awakeables.Settled(outcome, owner == null ? null : new Instances.Key(NAME, owner)));
    }

    @Test
    void each_settlement_of_a_batch_gets_its_own_outcome_in_batch_order_in_one_transaction() throws Exception {
        UUID fresh = pending("fresh");
        UUID sibling = pending("fresh"); // a second awakeable of the same instance: its lock again
        UUID before = pending("before");
        assertThat(awakeables.settle(before, "cancelled", null, null)).isEqualTo(SqlOutcomes.Settle.SETTLED);
        UUID twice = pending("twice");
        UUID unknown = UUID.randomUUID();

        List<SettleBatch.Answer> out = awakeables.settleTogether(List.of(complete(fresh, "\"f\""),
                complete(unknown, "1"), complete(before, "1"), complete(twice, "\"first\""),
                new SettleBatch.Settlement(twice, "failed", null, "second"), complete(sibling, "\"s\"")));

        assertThat(out).containsExactly(done(SqlOutcomes.Settle.SETTLED, "fresh"),
                done(SqlOutcomes.Settle.UNKNOWN, null), done(SqlOutcomes.Settle.ALREADY_CANCELLED, null),
                done(SqlOutcomes.Settle.SETTLED, "twice"), done(SqlOutcomes.Settle.ALREADY_COMPLETED, null),
                done(SqlOutcomes.Settle.SETTLED, "fresh"));
        assertThat(row(twice)).isEqualTo("completed \"first\" null"); // the first settlement of the batch won
        assertThat(row(fresh)).isEqualTo("completed \"f\" null");
        assertThat(row(sibling)).isEqualTo("completed \"s\" null");
        assertThat(row(before)).isEqualTo("cancelled null null");
        assertThat(status("fresh")).isEqualTo("running"); // woken in the same transaction
        assertThat(status("twice")).isEqualTo("running");
        assertThat(xmins(fresh, sibling, twice)).isEqualTo(1);
        assertThat(awakeables.settleTogether(List.of())).isEmpty();
    }

    @Test
    void an_instance_locked_elsewhere_is_busy_in_a_batch_and_settled_alone_once_its_lock_is_free() throws Exception {
        UUID busy = pending("busy");
        UUID free = pending("free");
        WorkflowClient client = WorkflowClient.create(store);
        // the holder closes first (its lock goes), so that closing the threads never waits for it
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
                Connection holder = POSTGRES.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement("SELECT waymark.wf_lock(?, ?)")) {
                lock.setString(1, NAME);
                lock.setString(2, "busy");
                lock.execute(); // another transaction holds the busy instance
            }
            // the batch does not wait for the lock (bounded here, so that a batch that waited fails the test)
            assertThat(
                    threads.submit(() -> awakeables.settleTogether(List.of(complete(busy, "1"), complete(free, "2"))))
                            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .containsExactly(new SettleBatch.Busy(new Instances.Key(NAME, "busy")),
                            done(SqlOutcomes.Settle.SETTLED, "free"));
            assertThat(row(busy)).isEqualTo("pending null null"); // not written

            Future<AwakeableOutcome> completing = threads.submit(() -> client.completeAwakeable(busy, "late"));
            // the settlement made alone waits for the instance lock ...
            await().atMost(WAIT).until(() -> waitingFor("wf_settle_awakeable(") == 1);
            assertThat(completing).isNotDone();
            assertThat(row(busy)).isEqualTo("pending null null");
            holder.rollback(); // ... and settles once it is free
            assertThat(completing.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo(AwakeableOutcome.SETTLED);
        }
        assertThat(row(busy)).isEqualTo("completed \"late\" null");
        assertThat(status("busy")).isEqualTo("running");
        assertThat(client.completeAwakeable(busy, "again")).isEqualTo(AwakeableOutcome.ALREADY_COMPLETED);
    }

    @Test
    void settlements_asked_for_during_a_statement_share_the_next_one() throws Exception {
        List<UUID> waiting = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            waiting.add(pending("shared-" + i));
        }
        List<Awakeables.Settled> settled = settleBehindABlockedStatement(waiting, i -> "\"v" + i + "\"");
        for (int i = 0; i < waiting.size(); i++) {
            assertThat(settled.get(i))
                    .isEqualTo(
                            new Awakeables.Settled(SqlOutcomes.Settle.SETTLED, new Instances.Key(NAME, "shared-" + i)));
            assertThat(row(waiting.get(i))).isEqualTo("completed \"v" + i + "\" null");
        }
        assertThat(xmins(waiting.toArray(UUID[]::new))).isEqualTo(1); // one transaction for the twenty
    }

    @Test
    void a_batch_that_fails_as_a_whole_fails_none_of_its_neighbours() throws Exception {
        List<UUID> waiting = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            waiting.add(pending("neighbour-" + i));
        }
        // the third payload is no JSON: the shared statement fails as a whole
        List<Object> results = settleBehindABlockedStatementCatching(waiting,
                i -> i == 2 ? "{no json" : "\"v" + i + "\"");
        for (int i = 0; i < waiting.size(); i++) {
            if (i == 2) {
                assertThat(results.get(i)).isInstanceOf(InvalidInputException.class);
                assertThat(row(waiting.get(i))).isEqualTo("pending null null");
            } else {
                assertThat(results.get(i)).isEqualTo(
                        new Awakeables.Settled(SqlOutcomes.Settle.SETTLED, new Instances.Key(NAME, "neighbour-" + i)));
                assertThat(row(waiting.get(i))).isEqualTo("completed \"v" + i + "\" null");
            }
        }
        assertThat(xmins(waiting.get(0), waiting.get(1))).as("each made alone").isEqualTo(2);
    }

    private List<Awakeables.Settled> settleBehindABlockedStatement(List<UUID> waiting,
            java.util.function.IntFunction<String> payload) throws Exception {
        List<Awakeables.Settled> out = new ArrayList<>();
        for (Object o : settleBehindABlockedStatementCatching(waiting, payload)) {
            assertThat(o).isInstanceOf(Awakeables.Settled.class);
            out.add((Awakeables.Settled) o);
        }
        return out;
    }

    /**
     * Settles {@code waiting} (the i-th with {@code payload(i)}) from one thread each while another
     * caller's shared statement is held up by a row lock, so that they all wait for the next one;
     * returns each caller's answer, or what it threw.
     */
    private List<Object> settleBehindABlockedStatementCatching(List<UUID> waiting,
            java.util.function.IntFunction<String> payload) throws Exception {
        String gateId = "gate-" + UUID.randomUUID();
        UUID gate = pending(gateId);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
                Connection holder = POSTGRES.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement(
                    "SELECT 1 FROM waymark.workflows WHERE name = ? AND id = ? FOR UPDATE")) {
                lock.setString(1, NAME);
                lock.setString(2, gateId);
                lock.executeQuery().close(); // the gate's wake waits for this row
            }
            Future<Awakeables.Settled> first = threads
                    .submit(() -> awakeables.settleShared(gate, "completed", "0", null));
            await().atMost(WAIT).until(() -> waitingFor("wf_settle_awakeables(") == 1);
            List<Future<Awakeables.Settled>> others = new ArrayList<>();
            for (int i = 0; i < waiting.size(); i++) {
                UUID awakeable = waiting.get(i);
                String json = payload.apply(i);
                others.add(threads.submit(() -> awakeables.settleShared(awakeable, "completed", json, null)));
            }
            await().atMost(WAIT).until(() -> awakeables.settlementsWaiting() == waiting.size());
            holder.rollback();
            assertThat(first.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .isEqualTo(new Awakeables.Settled(SqlOutcomes.Settle.SETTLED, new Instances.Key(NAME, gateId)));
            List<Object> out = new ArrayList<>();
            for (Future<Awakeables.Settled> f : others) {
                try {
                    out.add(f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
                } catch (java.util.concurrent.ExecutionException e) {
                    out.add(e.getCause());
                }
            }
            return out;
        }
    }

    /** How many backends wait for a lock in a statement containing {@code text}. */
    private static long waitingFor(String text) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                        + " WHERE wait_event_type = 'Lock' AND strpos(query, ?) > 0 AND pid <> pg_backend_pid()")) {
            ps.setString(1, text);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** An awakeable's status, payload and failure. */
    private static String row(UUID awakeable) throws SQLException {
        return single("SELECT status || ' ' || coalesce(payload::text, 'null') || ' ' || coalesce(failure, 'null')"
                + " FROM waymark.workflow_awakeables WHERE awakeable_id = ?::uuid", awakeable.toString());
    }

    private static String status(String id) throws SQLException {
        return single("SELECT status FROM waymark.workflows WHERE name = ? AND id = ?", NAME, id);
    }

    /** How many transactions last wrote these awakeables' rows. */
    private static long xmins(UUID... awakeables) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT count(DISTINCT xmin::text)"
                        + " FROM waymark.workflow_awakeables WHERE awakeable_id = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("uuid", awakeables));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static String single(String sql, String... args) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setString(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static void execute(String sql, String... args) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setString(i + 1, args[i]);
            }
            ps.executeUpdate();
        }
    }
}
