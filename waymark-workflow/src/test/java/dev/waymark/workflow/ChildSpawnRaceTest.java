package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A child's start and its parent's cancellation are serialized on the parent's lock: a child whose
 * start is still uncommitted when the parent is cancelled is either refused or found by the
 * cancellation's cascade, never left running.
 */
class ChildSpawnRaceTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static WorkflowClient client;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        client = WorkflowClient.create(store);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void a_cancel_racing_an_uncommitted_child_start_cancels_the_child() throws Exception {
        cancelWhileSpawning("p", false);
    }

    @Test
    void a_cancel_racing_an_uncommitted_batched_child_start_cancels_the_child() throws Exception {
        cancelWhileSpawning("b", true);
    }

    @Test
    void attaching_to_an_existing_child_does_not_wait_for_its_parents_lock() throws Exception {
        start("parent", "a", null, null);
        assertThat(start("child", "a.c", "parent", "a")).isEqualTo("created");
        try (Connection holder = POSTGRES.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement ps = holder.prepareStatement(
                    "SELECT pg_advisory_xact_lock(hashtextextended('waymark#wf#parent#a', 0))")) {
                ps.execute(); // the parent's lock, as a cancellation of it holds it
            }
            try (Connection spawning = POSTGRES.dataSource().getConnection()) {
                try (PreparedStatement ps = spawning.prepareStatement("SET statement_timeout = '10s'")) {
                    ps.execute(); // waiting for the lock would end in an error, not a hang
                }
                // before: the batch answered busy (and the engine then waited for the lock alone)
                assertThat(startInBatch(spawning, "child", "a.c", "parent", "a")).isEqualTo("exists");
                assertThat(start(spawning, "child", "a.c", "parent", "a")).isEqualTo("exists");
                try (PreparedStatement ps = spawning.prepareStatement("RESET statement_timeout")) {
                    ps.execute();
                }
            }
            holder.rollback();
        }
    }

    private static void cancelWhileSpawning(String p, boolean batched) throws Exception {
        start("parent", p, null, null);
        try (Connection spawning = POSTGRES.dataSource().getConnection()) {
            spawning.setAutoCommit(false);
            assertThat(batched
                    ? startInBatch(spawning, "child", p + ".c", "parent", p)
                    : start(spawning, "child", p + ".c", "parent", p)).isEqualTo("created");
            // the parent is cancelled while its child's start is not yet committed
            CompletableFuture<CancelOutcome> cancel = CompletableFuture.supplyAsync(() -> client.cancel("parent", p));
            await().atMost(WAIT).until(() -> cancel.isDone() || waitingForALock());
            spawning.commit();
            assertThat(cancel.get()).isEqualTo(CancelOutcome.CANCELLED);
        }
        // before: the cancellation did not wait; its cascade read the children before the child
        // committed, and the child ran on
        assertThat(client.handle("child", p + ".c", String.class).status()).isEqualTo(WorkflowStatus.CANCELLED);
    }

    @Test
    void a_child_start_after_its_parent_was_cancelled_is_refused() throws Exception {
        start("parent", "q", null, null);
        assertThat(client.cancel("parent", "q")).isEqualTo(CancelOutcome.CANCELLED);
        assertThat(start("child", "q.c", "parent", "q")).isEqualTo("parent_ended");
        assertThat(client.describe("child", "q.c")).isEmpty();
    }

    private static String start(String name, String id, String parentName, String parentId) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            return start(c, name, id, parentName, parentId);
        }
    }

    /** {@code wf_start} as a spawn runs it when it journals alone; returns its outcome's kind. */
    private static String start(Connection c, String name, String id, String parentName, String parentId)
            throws Exception {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT waymark.wf_start(?, ?, '\"x\"'::jsonb, ?, ?, ?, NULL, 60000)")) {
            return firstKind(ps, name, id, parentName, parentId);
        }
    }

    /** {@code wf_journal} with one start entry, as a spawn runs it in a shared batch. */
    private static String startInBatch(Connection c, String name, String id, String parentName, String parentId)
            throws Exception {
        try (PreparedStatement ps = c
                .prepareStatement("SELECT waymark.wf_journal(ARRAY[?], ARRAY[?], ARRAY[0], ARRAY[?],"
                        + " ARRAY['WorkflowStarted'], ARRAY['\"x\"'::jsonb], ARRAY[NULL::bigint], ARRAY[NULL::text],"
                        + " ARRAY[NULL::jsonb], ARRAY[?], ARRAY[?], ARRAY[NULL::text], ARRAY[60000::bigint],"
                        + " ARRAY[NULL::uuid], ARRAY[NULL::text])")) {
            return firstKind(ps, name, id, parentName, parentId);
        }
    }

    /** Binds a start of {@code name}/{@code id} under the parent and returns its outcome's kind. */
    private static String firstKind(PreparedStatement ps, String name, String id, String parentName, String parentId)
            throws Exception {
        ps.setString(1, name);
        ps.setString(2, id);
        ps.setObject(3, UUID.randomUUID());
        ps.setString(4, parentName);
        ps.setString(5, parentId);
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return ((String[]) rs.getArray(1).getArray())[0];
        }
    }

    private static boolean waitingForALock() {
        return WorkflowTesting.count(POSTGRES, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                + " AND datname = current_database()") > 0;
    }
}
