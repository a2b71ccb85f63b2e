package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.workflow.JournalEntry;
import dev.waymark.testkit.OneConnection;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What reading a journal (every resumed run does it) reads of the event table: its own entries,
 * however much the table grew after the session first read journals on a small one. (A statement the
 * driver prepared keeps the server's generic plan until the next ANALYZE: planned on small tables,
 * the read joined the stream row with every event of the table and sorted them.)
 */
class JournalReadPlansTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static final int BULK_EVENTS = 20_000;
    private static final int STEPS = 3;
    private static final int EARLY_READS = 12; // pgjdbc prepares at the fifth execution, the server plans generically from the sixth

    private static EventStore store;
    private static Instances instances;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        store.migrate();
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
                    "{\"step\":\"s" + i + "\",\"result\":1}", epoch, null, null, null).kind()).isEqualTo("appended");
        }
        // as autovacuum does early on: statistics that say the journal tables are tiny
        execute("ANALYZE \"" + store.schema() + "\".events, \"" + store.schema() + "\".streams");
        String eventTable = "\"" + store.schema() + "\".events";
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            Instances onThisConnection = new Instances(OneConnection.dataSource(c), store.schema());
            for (int k = 0; k < EARLY_READS; k++) {
                assertThat(onThisConnection.journal("plans", "j", 0)).hasSize(1 + STEPS);
                c.commit();
            }
            execute("INSERT INTO " + eventTable
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

    private static void execute(String sql) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
