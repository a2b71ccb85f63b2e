package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.status.WorkflowStatus;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Schema version 11: fences found by review. Lease epochs are never reused for an id that was
 * collected and started again; a failed parent's child is kept for the parent's retry; settling an
 * awakeable locks in the same order as an instance's end; a crash counts only under its own lease.
 */
class CollectionFencesTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Duration TTL = Duration.ofMinutes(5);

    private static EventStore store;
    private static Instances instances;
    private static String s;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        instances = new Instances(POSTGRES.dataSource(), store.schema());
        s = "\"" + store.schema() + "\".";
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void a_worker_of_a_collected_instance_cannot_journal_into_the_instance_started_again() {
        long old = instances.start("pay", "o1", "{\"amount\":1}", UUID.randomUUID(), null, "worker-a", TTL).epoch();
        // cancelled by a client (unfenced) while worker-a is still inside a step; then collected
        assertThat(instances.append("pay", "o1", 0, UUID.randomUUID(), "WorkflowCancelled", "{}", null,
                WorkflowStatus.CANCELLED, null, null).kind()).isEqualTo(SqlOutcomes.Append.APPENDED);
        assertThat(query("SELECT " + s + "wf_collect('pay', 'o1', '0')")).isEqualTo("deleted");

        long fresh = instances.start("pay", "o1", "{\"amount\":2}", UUID.randomUUID(), null, "worker-b", TTL).epoch();
        assertThat(fresh).isGreaterThan(old);
        // worker-a's step ends now, journaling under the epoch it still holds
        Instances.Appended stale = instances.append("pay", "o1", 0, Ids.entryId("pay", "o1", 0, "charge"),
                "StepRecorded", "{\"step\":\"charge\",\"result\":\"charged-with-amount-1\"}", old, null, null, null);
        assertThat(stale.kind()).isEqualTo(SqlOutcomes.Append.LEASE_LOST);
        assertThat(query("SELECT count(*)::text FROM " + s + "events e JOIN " + s + "streams t USING (stream_id)"
                + " WHERE t.stream_name = '$wf-pay-o1' AND e.event_type = 'StepRecorded'")).isEqualTo("0");
        // and a claim after the lease expires moves on to an epoch no earlier lease had
        POSTGRES.execute("UPDATE " + s + "workflows SET lease_expires_at = now() - interval '1 second'"
                + " WHERE name = 'pay' AND id = 'o1'");
        long claimed = instances.leases().claim("pay", "o1", "worker-c", TTL).orElseThrow().epoch();
        assertThat(claimed).isGreaterThan(fresh);
    }

    @Test
    void the_finished_child_of_a_failed_parent_is_kept_for_the_parents_retry() {
        POSTGRES.execute("INSERT INTO " + s + "workflows (name, id, status, input, completed_at) VALUES"
                + " ('par', 'p1', 'failed', '1', now() - interval '1 hour')");
        POSTGRES.execute("INSERT INTO " + s + "workflows (name, id, status, input, parent_name, parent_id,"
                + " completed_at) VALUES ('kid', 'c1', 'completed', '1', 'par', 'p1', now() - interval '1 hour')");
        assertThat(query("SELECT string_agg(name || '/' || id, ',' ORDER BY name) FROM " + s
                + "wf_gc_candidates('0', 10)")).isEqualTo("par/p1");
        assertThat(query("SELECT " + s + "wf_collect('kid', 'c1', '0')")).isEqualTo("kept");

        assertThat(query("SELECT " + s + "wf_collect('par', 'p1', '0')")).isEqualTo("deleted");
        assertThat(query("SELECT " + s + "wf_collect('kid', 'c1', '0')")).isEqualTo("deleted"); // parent gone
    }

    @Test
    void settling_an_awakeable_while_its_instance_ends_does_not_deadlock() throws Exception {
        instances.start("aw", "a1", "1", UUID.randomUUID(), null, "worker", TTL);
        UUID awakeable = UUID.randomUUID();
        POSTGRES.execute("INSERT INTO " + s + "workflow_awakeables (awakeable_id, name, id, generation, label)"
                + " VALUES ('" + awakeable + "', 'aw', 'a1', 0, 'go')");
        try (Connection ending = POSTGRES.dataSource().getConnection()) {
            ending.setAutoCommit(false);
            try (Statement st = ending.createStatement()) {
                st.execute("SELECT " + s + "wf_lock('aw', 'a1')"); // an instance's end takes its lock first
                CompletableFuture<String> settled = CompletableFuture.supplyAsync(() -> query(
                        "SELECT " + s + "wf_settle_awakeable('" + awakeable + "', 'completed', 'true', NULL)"));
                await().atMost(Duration.ofSeconds(20)).until(() -> "Lock".equals(query(
                        "SELECT max(wait_event_type) FROM pg_stat_activity WHERE query LIKE '%wf_settle_awakeable%'"
                                + " AND pid <> pg_backend_pid() AND datname = current_database()")));
                // then abandons its pending awakeables: with the settlement holding the row, a deadlock
                st.execute("UPDATE " + s + "workflow_awakeables SET status = 'abandoned', completed_at = now()"
                        + " WHERE name = 'aw' AND id = 'a1' AND status = 'pending'");
                ending.commit();
                assertThat(settled.get(20, TimeUnit.SECONDS)).isEqualTo("already_abandoned");
            }
        }
    }

    @Test
    void a_worker_that_lost_its_lease_does_not_count_its_crash() {
        long old = instances.start("crash", "k1", "1", UUID.randomUUID(), null, "worker-a", TTL).epoch();
        POSTGRES.execute("UPDATE " + s + "workflows SET lease_expires_at = now() - interval '1 second'"
                + " WHERE name = 'crash' AND id = 'k1'");
        long taken = instances.leases().claim("crash", "k1", "worker-b", TTL).orElseThrow().epoch();

        assertThat(
                instances.leases().recordCrash("crash", "k1", "boom", Duration.ofMillis(1), Duration.ofMillis(5), old))
                .isEmpty(); // worker-a's body threw after worker-b took over
        assertThat(query("SELECT attempts::text FROM " + s + "workflows WHERE name = 'crash' AND id = 'k1'"))
                .isEqualTo("0");
        assertThat(instances.leases().recordCrash("crash", "k1", "boom", Duration.ofMillis(1), Duration.ofMillis(5),
                taken))
                .hasValue(1);
    }

    @Test
    void a_lease_held_by_two_runs_is_renewed_until_both_ended() {
        Duration ttl = Duration.ofMillis(1500); // renewed every 500 ms
        Instances.Key key = new Instances.Key("keep", "k1");
        instances.start("keep", "k1", "1", UUID.randomUUID(), null, "keeper-1", ttl);
        try (LeaseKeeper keeper = new LeaseKeeper(instances, "keeper-1", ttl)) {
            keeper.hold(key); // an attempt whose lease lapsed, still running ...
            keeper.hold(key); // ... and the attempt that re-claimed the instance under the same owner
            keeper.drop(key); // the first one ends
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> leaseLive("k1"));
            keeper.drop(key);
            await().atMost(Duration.ofSeconds(10)).until(() -> !leaseLive("k1"));
        }
    }

    private static boolean leaseLive(String id) {
        return Boolean.parseBoolean(query("SELECT (lease_expires_at > now())::text FROM " + s + "workflows"
                + " WHERE name = 'keep' AND id = '" + id + "'"));
    }

    private static String query(String sql) {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
