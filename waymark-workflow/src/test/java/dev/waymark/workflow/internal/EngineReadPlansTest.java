package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.OneConnection;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.status.JournalEntry;
import java.sql.Connection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the engine's recurring reads read, however much the tables grew after the session first ran
 * them on small ones: a journal read (every resumed run does it) its own entries; a resume pass's
 * discovery and counts the active instances and pending awakeables, not the finished ones;
 * suspending, settling an awakeable and continuing as new their own rows, not every waiting instance.
 * (A statement the driver prepared, or a PL/pgSQL statement, keeps its generic plan until the next
 * ANALYZE: planned on small tables, the journal read joined the stream row with every event of the
 * table, discovery scanned every instance row, and waking an instance walked every suspended one.)
 */
class EngineReadPlansTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int BULK_EVENTS = 20_000;
    private static final int FINISHED = 20_000;
    private static final int STEPS = 3;
    private static final int EARLY_READS = 12; // pgjdbc prepares at the fifth execution, the server plans generically from the sixth

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

    @Test
    void a_journal_read_reads_its_own_entries_however_large_the_event_table_grew() throws Exception {
        long epoch = instances.start("plans", "j", "1", UUID.randomUUID(), null, "me", Duration.ofMinutes(5)).epoch();
        for (int i = 0; i < STEPS; i++) {
            assertThat(instances.append("plans", "j", 0, Ids.entryId("plans", "j", 0, "s" + i), "StepCompleted",
                    "{\"step\":\"s" + i + "\",\"result\":1}", epoch, null, null, null).kind())
                    .isEqualTo(SqlOutcomes.Append.APPENDED);
        }
        // as autovacuum does early on: statistics that say the journal tables are tiny
        POSTGRES.execute("ANALYZE \"" + store.schema() + "\".events, \"" + store.schema() + "\".streams");
        String eventTable = "\"" + store.schema() + "\".events";
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            Instances onThisConnection = new Instances(OneConnection.dataSource(c), store.schema());
            for (int k = 0; k < EARLY_READS; k++) {
                assertThat(onThisConnection.journal("plans", "j", 0)).hasSize(1 + STEPS);
                c.commit();
            }
            POSTGRES.execute("INSERT INTO " + eventTable
                    + " (event_id, stream_id, stream_version, category, event_type, data, created_at)"
                    + " SELECT gen_random_uuid(), -1, g, 'bulk', 'Bulk', '{}', now()"
                    + " FROM generate_series(1, " + BULK_EVENTS + ") g");
            long before = OneConnection.rowsRead(c, eventTable);
            assertThat(onThisConnection.journal("plans", "j", 0)).extracting(JournalEntry::version)
                    .containsExactly(1L, 2L, 3L, 4L);
            assertThat(OneConnection.rowsRead(c, eventTable) - before).isLessThan(BULK_EVENTS / 10);
            c.commit();
        }
    }

    @Test
    void a_resume_pass_reads_the_active_instances_however_many_finished_ones_the_tables_hold() throws Exception {
        String schema = "\"" + store.schema() + "\"";
        POSTGRES.execute("INSERT INTO " + schema + ".workflows (name, id, status, input) VALUES"
                + " ('pass', 'r1', 'running', '1'), ('pass', 'r2', 'running', '1'), ('gone', 'r3', 'running', '1')");
        POSTGRES.execute("INSERT INTO " + schema + ".workflow_awakeables (awakeable_id, name, id, generation, label)"
                + " VALUES (gen_random_uuid(), 'pass', 'r1', 0, 'a')");
        POSTGRES.execute("ANALYZE " + schema + ".workflows, " + schema + ".workflow_awakeables");
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            Instances onThisConnection = new Instances(OneConnection.dataSource(c), store.schema());
            Map<String, Supplier<Object>> reads = new LinkedHashMap<>();
            reads.put("discover", () -> onThisConnection.queries().discover(List.of("pass"), 10));
            reads.put("discover unknown names", () -> onThisConnection.queries().discoverUnknown(List.of("pass"), 10));
            reads.put("count runnable", onThisConnection.queries()::countRunnable);
            reads.put("count pending awakeables", onThisConnection.awakeables()::countPending);
            // a claim that finds nothing of its names (a claim that took r1 and r2 would change the next answer)
            reads.put("claim due",
                    () -> onThisConnection.leases().claimDue(List.of("nobody"), "me", Duration.ofMinutes(1),
                            10).claimed());
            reads.put("backlog", () -> {
                dev.waymark.workflow.backpressure.WorkflowBacklog b = onThisConnection.queries().backlog(0);
                return List.of(b.runnable(), b.sleeping(), b.waiting(), b.pendingAwakeables());
            });
            Map<String, Object> expected = new LinkedHashMap<>(); // what the small tables answer: the finished rows change nothing
            reads.forEach((what, read) -> expected.put(what, read.get()));
            assertThat(expected.get("discover"))
                    .isEqualTo(List.of(new Instances.Key("pass", "r1"), new Instances.Key("pass", "r2")));
            assertThat(expected.get("discover unknown names"))
                    .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.LIST)
                    .contains(new Instances.Key("gone", "r3"));
            assertThat(expected.get("count pending awakeables")).isEqualTo(1L);
            assertThat(expected.get("claim due")).isEqualTo(List.of());
            assertThat(expected.get("backlog")).isEqualTo(List.of(3L, 0L, 3L, 1L));
            for (int k = 1; k < EARLY_READS; k++) {
                reads.values().forEach(Supplier::get);
                c.commit();
            }
            POSTGRES.execute("INSERT INTO " + schema + ".workflows (name, id, status, input, completed_at)"
                    + " SELECT 'pass', 'done-' || g, 'completed', '1', now() FROM generate_series(1, " + FINISHED
                    + ") g");
            POSTGRES.execute(
                    "INSERT INTO " + schema + ".workflow_awakeables (awakeable_id, name, id, generation, label, status)"
                            + " SELECT gen_random_uuid(), 'pass', 'done-' || g, 0, 'a', 'completed'"
                            + " FROM generate_series(1, " + FINISHED + ") g");
            SoftAssertions softly = new SoftAssertions();
            String[] tables = {schema + ".workflows", schema + ".workflow_awakeables"};
            for (Map.Entry<String, Supplier<Object>> read : reads.entrySet()) {
                long before = OneConnection.rowsRead(c, tables);
                softly.assertThat(read.getValue().get()).as(read.getKey()).isEqualTo(expected.get(read.getKey()));
                softly.assertThat(OneConnection.rowsRead(c, tables) - before).as("rows read by " + read.getKey())
                        .isLessThan(FINISHED / 10);
                c.commit();
            }
            softly.assertAll();
        }
    }

    @Test
    void suspending_settling_and_continuing_read_their_own_rows_however_many_awakeables_are_pending() throws Exception {
        String schema = "\"" + store.schema() + "\"";
        int instancesUsed = EARLY_READS + 1;
        List<Long> epochs = new java.util.ArrayList<>();
        List<UUID> awakeables = new java.util.ArrayList<>();
        for (int k = 0; k < instancesUsed; k++) {
            epochs.add(instances.start("settle", "s" + k, "1", UUID.randomUUID(), null, "me", Duration.ofMinutes(5))
                    .epoch());
            UUID awakeable = UUID.randomUUID();
            POSTGRES.execute(
                    "INSERT INTO " + schema + ".workflow_awakeables (awakeable_id, name, id, generation, label)"
                            + " VALUES ('" + awakeable + "', 'settle', 's" + k + "', 0, 'a')");
            awakeables.add(awakeable);
        }
        POSTGRES.execute("ANALYZE " + schema + ".workflows, " + schema + ".workflow_awakeables");
        String[] tables = {schema + ".workflows", schema + ".workflow_awakeables"};
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            Instances onThisConnection = new Instances(OneConnection.dataSource(c), store.schema());
            SoftAssertions softly = new SoftAssertions();
            for (int k = 0; k < instancesUsed; k++) {
                if (k == EARLY_READS) { // the plans were made on small tables: now many instances wait on awakeables
                    POSTGRES.execute("INSERT INTO " + schema + ".workflows (name, id, status, input, waiting_on)"
                            + " SELECT 'other', 'o-' || g, 'suspended', '1', 'awakeable' FROM generate_series(1, "
                            + FINISHED + ") g");
                    POSTGRES.execute(
                            "INSERT INTO " + schema + ".workflow_awakeables (awakeable_id, name, id, generation, label)"
                                    + " SELECT gen_random_uuid(), 'other', 'o-' || g, 0, 'a' FROM generate_series(1, "
                                    + FINISHED + ") g");
                }
                String id = "s" + k;
                Map<String, Supplier<Object>> steps = new LinkedHashMap<>();
                int at = k;
                steps.put("suspend", () -> onThisConnection.suspend("settle", id, 0, epochs.get(at), "awakeable", null,
                        awakeables.get(at), null));
                steps.put("read the awakeable",
                        () -> onThisConnection.awakeables().state(awakeables.get(at)).orElseThrow().status());
                steps.put("settle",
                        () -> onThisConnection.awakeables().settle(awakeables.get(at), "completed", "1", null));
                steps.put("continue as new", () -> onThisConnection.rotate("settle", id, 0, epochs.get(at), "2"));
                Map<String, Object> outcomes = Map.of("suspend", SqlOutcomes.Suspend.SUSPENDED, "read the awakeable",
                        "pending", "settle", SqlOutcomes.Settle.SETTLED, "continue as new", SqlOutcomes.Rotate.ROTATED);
                for (Map.Entry<String, Supplier<Object>> step : steps.entrySet()) {
                    long before = OneConnection.rowsRead(c, tables);
                    softly.assertThat(step.getValue().get()).as(step.getKey() + " of " + id)
                            .isEqualTo(outcomes.get(step.getKey()));
                    if (k == EARLY_READS) {
                        softly.assertThat(OneConnection.rowsRead(c, tables) - before)
                                .as("rows read by " + step.getKey())
                                .isLessThan(FINISHED / 10);
                    }
                    c.commit();
                }
            }
            softly.assertAll();
        }
    }
}
