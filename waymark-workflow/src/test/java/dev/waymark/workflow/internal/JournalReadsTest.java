package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.OneConnection;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a {@code wf_journal} batch reads of the instance and event tables: its own entries' rows, by
 * key, however many other instances are running and however much the tables grew after the session
 * planned the batch on small ones. (Version 7's plans, made on small tables, read the whole event
 * table or every running instance per batch: with 5,000 running instances the workflow benchmark
 * fell from 0.5 to 0.1 of raw commits.)
 */
class JournalReadsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int OTHERS_RUNNING = 2_000;
    private static final int BULK_EVENTS = 20_000;
    private static final int PLANNED_BATCHES = 6; // the plan cache switches from custom to generic plans at the sixth call
    private static final int MEASURED_BATCHES = 4;

    private static EventStore store;
    private static Instances instances;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        instances = new Instances(POSTGRES.dataSource(), store.schema());
        POSTGRES.execute("INSERT INTO \"" + store.schema() + "\".workflows (name, id, status, input)"
                + " SELECT 'other', 'other-' || g, 'running', '1' FROM generate_series(1, " + OTHERS_RUNNING + ") g");
        POSTGRES.execute("ANALYZE \"" + store.schema() + "\".workflows");
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void a_batch_of_steps_and_completions_reads_only_its_own_rows_however_large_the_tables_grew() throws Exception {
        List<String> ids = List.of("a", "b", "c");
        List<Long> epochs = new ArrayList<>();
        for (String id : ids) {
            epochs.add(instances.start("reads", id, "1", UUID.randomUUID(), null, "me", Duration.ofMinutes(5)).epoch());
        }
        // as autovacuum does early on: statistics that say the journal tables are tiny
        POSTGRES.execute("ANALYZE \"" + store.schema() + "\".events, \"" + store.schema() + "\".streams");
        String instanceTable = "\"" + store.schema() + "\".workflows";
        String eventTable = "\"" + store.schema() + "\".events";
        long instanceRows = 0;
        long eventRows = 0;
        int entries = 0;
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            Instances onThisConnection = new Instances(OneConnection.dataSource(c), store.schema());
            for (int k = 0; k < PLANNED_BATCHES + MEASURED_BATCHES; k++) {
                if (k == PLANNED_BATCHES) { // the connection's plans were made on small tables: grow them now
                    POSTGRES.execute("INSERT INTO \"" + store.schema() + "\".events"
                            + " (event_id, stream_id, stream_version, category, event_type, data, created_at)"
                            + " SELECT gen_random_uuid(), -1, g, 'bulk', 'Bulk', '{}', now()"
                            + " FROM generate_series(1, " + BULK_EVENTS + ") g");
                }
                List<JournalWrite> batch = new ArrayList<>();
                for (int i = 0; i < ids.size(); i++) {
                    String id = ids.get(i);
                    UUID entryId = Ids.entryId("reads", id, 0, "s" + k);
                    batch.add(k < PLANNED_BATCHES + MEASURED_BATCHES - 1
                            ? JournalWrite.step("reads", id, 0, entryId, "{\"step\":\"s" + k + "\",\"result\":1}",
                                    epochs.get(i))
                            : JournalWrite.completion("reads", id, 0, entryId, "1", epochs.get(i)));
                }
                // reads only: the transaction has no xid yet, as wf_journal wants
                long instancesBefore = OneConnection.rowsRead(c, instanceTable);
                long eventsBefore = OneConnection.rowsRead(c, eventTable);
                assertThat(onThisConnection.journal(batch)).extracting(BatchJournal.Outcome::kind)
                        .containsOnly("appended");
                if (k >= PLANNED_BATCHES) {
                    instanceRows += OneConnection.rowsRead(c, instanceTable) - instancesBefore;
                    eventRows += OneConnection.rowsRead(c, eventTable) - eventsBefore;
                    entries += batch.size();
                }
                c.commit();
            }
        }
        assertThat(entries).isEqualTo(3 * MEASURED_BATCHES);
        // one primary-key read per entry, and two more per completion (its parent, its row's update)
        assertThat(instanceRows).isLessThanOrEqualTo(3L * entries).isLessThan(OTHERS_RUNNING);
        assertThat(eventRows).isLessThan(BULK_EVENTS / 10);
        assertThat(query("SELECT count(*) FROM \"" + store.schema()
                + "\".workflows WHERE name = 'reads' AND status = 'completed'")).isEqualTo(ids.size());
    }

    private static long query(String sql) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
