package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An awakeable created in a shared {@code wf_journal} transaction: its row exists exactly when its
 * step entry was written by this batch, on the one-statement path of distinct instances and on the
 * entry-by-entry path alike; a refused or already present entry leaves no row.
 */
class AwakeableBatchTest {

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
        return instances.start("awk", id, "1", UUID.randomUUID(), null, "me", Duration.ofMinutes(5)).epoch();
    }

    private static JournalWrite entry(String id, String step, long epoch) {
        return JournalWrite.step("awk", id, 0, Ids.entryId("awk", id, 0, step),
                "{\"step\":\"" + step + "\",\"result\":\"" + id + "-" + step + "\"}", epoch);
    }

    @Test
    void rows_exist_exactly_for_the_entries_the_batch_wrote() throws Exception {
        long fresh = started("fresh");
        long fenced = started("fenced");
        long present = started("present");
        assertThat(instances.appendEntry(entry("present", "awkid:a", present)).kind())
                .isEqualTo(SqlOutcomes.Append.APPENDED);
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        UUID c = UUID.randomUUID();

        List<BatchJournal.Outcome> out = instances.journal(List.of(
                entry("fresh", "awkid:a", fresh).withAwakeable(a, "a"),
                entry("fenced", "awkid:a", fenced + 1).withAwakeable(b, "a"),
                entry("present", "awkid:a", present).withAwakeable(c, "a")));

        assertThat(out).extracting(BatchJournal.Outcome::kind).containsExactly("appended", "lease_lost", "present");
        assertThat(rowOf(a)).isEqualTo("fresh/0/a/pending");
        assertThat(rowOf(b)).isNull();
        assertThat(rowOf(c)).isNull();
        assertThat(sameTransaction(a, "fresh")).isTrue();
    }

    @Test
    void entries_of_one_instance_take_the_entry_by_entry_path_and_still_create_their_rows() throws Exception {
        long twin = started("twin");
        long stale = started("stale");
        UUID first = UUID.randomUUID();
        UUID second = UUID.randomUUID();
        UUID refused = UUID.randomUUID();

        List<BatchJournal.Outcome> out = instances.journal(List.of(
                entry("twin", "awkid:x", twin).withAwakeable(first, "x"),
                entry("twin", "awkid:y", twin).withAwakeable(second, "y"),
                entry("stale", "s", stale), entry("stale", "awkid:z", stale + 1).withAwakeable(refused, "z")));

        assertThat(out).extracting(BatchJournal.Outcome::kind)
                .containsExactly("appended", "appended", "appended", "lease_lost");
        assertThat(rowOf(first)).isEqualTo("twin/0/x/pending");
        assertThat(rowOf(second)).isEqualTo("twin/0/y/pending");
        assertThat(rowOf(refused)).isNull();
        assertThat(sameTransaction(first, "twin")).isTrue();
    }

    @Test
    void an_entry_written_alone_creates_its_row_in_its_own_statement() throws Exception {
        long alone = started("alone");
        UUID id = UUID.randomUUID();
        assertThat(instances.appendAlone(entry("alone", "awkid:a", alone).withAwakeable(id, "a")).kind())
                .isEqualTo(SqlOutcomes.Append.APPENDED);
        assertThat(rowOf(id)).isEqualTo("alone/0/a/pending");
        assertThat(instances.appendAlone(entry("alone", "awkid:a", alone).withAwakeable(UUID.randomUUID(), "a"))
                .kind()).isEqualTo(SqlOutcomes.Append.PRESENT);
        assertThat(count("SELECT count(*) FROM \"" + store.schema() + "\".workflow_awakeables WHERE id = 'alone'"))
                .isEqualTo(1);
    }

    /** The awakeable's owner, generation, label and status, or null when it has no row. */
    private static String rowOf(UUID awakeable) throws SQLException {
        try (Connection conn = POSTGRES.dataSource().getConnection();
                PreparedStatement ps = conn.prepareStatement("SELECT id || '/' || generation || '/' || label || '/'"
                        + " || status FROM \"" + store.schema() + "\".workflow_awakeables WHERE awakeable_id = ?")) {
            ps.setObject(1, awakeable);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    /** Whether the awakeable's row was inserted by the transaction that journaled its id (fresh server: 32-bit xids). */
    private static boolean sameTransaction(UUID awakeable, String id) throws SQLException {
        return count("SELECT count(*) FROM \"" + store.schema() + "\".workflow_awakeables a, \"" + store.schema()
                + "\".events e JOIN \"" + store.schema() + "\".streams s USING (stream_id)"
                + " WHERE a.awakeable_id = '" + awakeable + "' AND s.stream_name = '$wf-awk-" + id + "'"
                + " AND e.data ->> 'step' LIKE 'awkid:%' AND a.label = substr(e.data ->> 'step', 7)"
                + " AND a.xmin::text = (e.tx_id::text::bigint % 4294967296)::text") == 1;
    }

    private static long count(String sql) throws SQLException {
        try (Connection conn = POSTGRES.dataSource().getConnection();
                PreparedStatement ps = conn.prepareStatement(sql);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
