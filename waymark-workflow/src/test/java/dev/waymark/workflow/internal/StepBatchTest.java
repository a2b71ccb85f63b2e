package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.status.WorkflowStatus;
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
 * {@code wf_journal}: each entry of a shared transaction (starts, steps, completions) gets exactly
 * the outcome it would get alone (fencing, first writer wins, terminal refusal, idempotent start), an
 * instance locked elsewhere is skipped unwritten, and the written entries share one transaction.
 */
class StepBatchTest {

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
        return instances.start("batch", id, "1", UUID.randomUUID(), null, "me", Duration.ofMinutes(5)).epoch();
    }

    private static JournalWrite entry(String id, String step, long epoch) {
        return JournalWrite.step("batch", id, 0, Ids.entryId("batch", id, 0, step),
                "{\"step\":\"" + step + "\",\"result\":\"" + id + "-" + step + "\"}", epoch);
    }

    @Test
    void every_entry_gets_its_own_outcome_and_written_entries_share_one_transaction() throws Exception {
        long fresh = started("fresh");
        long other = started("other");
        long fenced = started("fenced");
        long dup = started("dup");
        assertThat(instances.appendEntry(entry("dup", "s", dup)).kind()).isEqualTo(SqlOutcomes.Append.APPENDED);
        long done = started("done");
        assertThat(instances.append("batch", "done", 0, UUID.randomUUID(), "WorkflowCompleted", "{\"result\":1}", done,
                WorkflowStatus.COMPLETED, "1", null).kind()).isEqualTo(SqlOutcomes.Append.APPENDED);
        long busy = started("busy");

        try (Connection holder = POSTGRES.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement("SELECT \"" + store.schema() + "\".wf_lock(?, ?)")) {
                lock.setString(1, "batch");
                lock.setString(2, "busy");
                lock.execute(); // another transaction holds the busy instance
            }
            List<BatchJournal.Outcome> out = instances.journal(List.of(entry("fresh", "s", fresh),
                    entry("fenced", "s", fenced + 1), entry("dup", "s", dup), entry("done", "s", done),
                    entry("busy", "s", busy), entry("other", "s", other)));
            assertThat(out).extracting(BatchJournal.Outcome::kind)
                    .containsExactly("appended", "lease_lost", "present", "refused", "busy", "appended");
            assertThat(out.get(2).detail()).isEqualTo("\"dup-s\""); // the first writer's result
            assertThat(out.get(3).detail()).isEqualTo("completed");
            holder.rollback();
        }
        assertThat(steps("fresh")).isEqualTo(1);
        assertThat(steps("other")).isEqualTo(1);
        assertThat(steps("fenced")).isZero();
        assertThat(steps("dup")).isEqualTo(1);
        assertThat(steps("done")).isZero();
        assertThat(steps("busy")).isZero(); // skipped, not half-written: its run journals it alone
        assertThat(transactions("fresh", "other")).isEqualTo(1);
        assertThat(instances.appendEntry(entry("busy", "s", busy)).kind()).isEqualTo(SqlOutcomes.Append.APPENDED);
    }

    @Test
    void entries_of_one_instance_in_one_batch_are_journaled_in_batch_order_each_with_its_own_outcome()
            throws Exception {
        long twin = started("twin");
        started("taken");
        long current = 2;
        execute("UPDATE \"" + store.schema() + "\".workflows SET lease_epoch = " + current + " WHERE id = 'taken'");
        JournalWrite stale = entry("taken", "u", current - 1); // a run that lost its lease, same step id
        JournalWrite unfenced = JournalWrite.step("batch", "taken", 0, Ids.entryId("batch", "taken", 0, "u"),
                "{\"step\":\"u\",\"result\":\"other\"}", null);

        List<BatchJournal.Outcome> out = instances.journal(List.of(entry("twin", "s", twin), stale,
                entry("taken", "u", current), entry("twin", "t", twin), unfenced));

        assertThat(out).extracting(BatchJournal.Outcome::kind)
                .containsExactly("appended", "lease_lost", "appended", "appended", "present");
        assertThat(out.get(1).detail()).isEqualTo(Long.toString(current));
        assertThat(out.get(4).detail()).isEqualTo("\"taken-u\""); // the current run's result, written first
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".events e JOIN \"" + store.schema()
                + "\".streams s USING (stream_id) WHERE s.stream_name = '$wf-batch-twin'"
                + " AND ((e.stream_version = 2 AND e.data ->> 'step' = 's')"
                + " OR (e.stream_version = 3 AND e.data ->> 'step' = 't'))")).isEqualTo(2);
        assertThat(steps("taken")).isEqualTo(1);
    }

    @Test
    void a_step_the_shared_statement_cannot_write_gets_the_lone_outcome_in_the_same_batch() throws Exception {
        long sleeper = started("sleeper");
        execute("UPDATE \"" + store.schema() + "\".workflows SET status = 'suspended', waiting_on = 'sleep'"
                + " WHERE id = 'sleeper'");
        long old = started("old");
        long plain = started("plain");
        JournalWrite staleGeneration = JournalWrite.step("batch", "old", 1, Ids.entryId("batch", "old", 1, "s"),
                "{\"step\":\"s\",\"result\":1}", old);

        List<BatchJournal.Outcome> out = instances.journal(List.of(entry("sleeper", "s", sleeper), staleGeneration,
                entry("plain", "s", plain)));

        assertThat(out).extracting(BatchJournal.Outcome::kind).containsExactly("appended", "stale", "appended");
        assertThat(status("sleeper")).isEqualTo("running"); // a step of a suspended run wakes it
        assertThat(steps("sleeper")).isEqualTo(1);
        assertThat(steps("old")).isZero();
        assertThat(transactions("sleeper", "plain")).isEqualTo(1);
    }

    @Test
    void a_completion_in_a_batch_needs_its_parents_lock_too_and_wakes_the_parent() throws Exception {
        started("parent");
        long kid = instances.start("batch", "kid", "1", UUID.randomUUID(), new Instances.Key("batch", "parent"), "me",
                Duration.ofMinutes(5)).epoch();
        long solo = started("solo");
        JournalWrite done = JournalWrite.completion("batch", "kid", 0, Ids.entryId("batch", "kid", 0,
                "__completed__"), "42", kid);
        try (Connection holder = POSTGRES.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement("SELECT \"" + store.schema() + "\".wf_lock(?, ?)")) {
                lock.setString(1, "batch");
                lock.setString(2, "parent");
                lock.execute(); // the parent is busy elsewhere: the child's completion must not wait for it
            }
            assertThat(instances.journal(List.of(done, entry("solo", "s", solo))))
                    .extracting(BatchJournal.Outcome::kind).containsExactly("busy", "appended");
            holder.rollback();
        }
        assertThat(status("kid")).isEqualTo("running");
        execute("UPDATE \"" + store.schema() + "\".workflows SET status = 'suspended', waiting_on = 'child'"
                + " WHERE id = 'parent'");
        assertThat(instances.journal(List.of(done, entry("solo", "t", solo))))
                .extracting(BatchJournal.Outcome::kind).containsExactly("appended", "appended");
        assertThat(status("kid")).isEqualTo("completed");
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflows WHERE id = 'kid'"
                + " AND result = '42'::jsonb AND lease_owner IS NULL")).isEqualTo(1);
        assertThat(status("parent")).isEqualTo("running"); // woken in the same transaction
    }

    @Test
    void a_completion_closes_the_instance_row_abandons_its_awakeables_and_journals_its_entry_together()
            throws Exception {
        long epoch = started("closing");
        execute("UPDATE \"" + store.schema()
                + "\".workflows SET attempts = 2, last_error = 'boom' WHERE id = 'closing'");
        execute("INSERT INTO \"" + store.schema() + "\".workflow_awakeables (awakeable_id, name, id, generation, label)"
                + " VALUES (gen_random_uuid(), 'batch', 'closing', 0, 'approval')");
        long suspendedEpoch = started("parked");
        execute("UPDATE \"" + store.schema() + "\".workflows SET status = 'suspended', waiting_on = 'sleep'"
                + " WHERE id = 'parked'");
        JournalWrite done = JournalWrite.completion("batch", "closing", 0,
                Ids.entryId("batch", "closing", 0, "__completed__"), "42", epoch);
        JournalWrite stale = JournalWrite.completion("batch", "closing", 0, UUID.randomUUID(), "43", epoch + 1);
        JournalWrite parked = JournalWrite.completion("batch", "parked", 0,
                Ids.entryId("batch", "parked", 0, "__completed__"), "7", suspendedEpoch);

        assertThat(instances.journal(List.of(stale))).extracting(BatchJournal.Outcome::kind)
                .containsExactly("lease_lost");
        assertThat(status("closing")).isEqualTo("running"); // nothing written
        assertThat(instances.journal(List.of(done, parked))).extracting(BatchJournal.Outcome::kind)
                .containsExactly("appended", "appended");
        BatchJournal.Outcome again = instances.journal(List.of(done)).get(0);
        assertThat(again.kind()).isEqualTo("present");
        assertThat(again.detail()).isEqualTo("42"); // the recorded result, for the caller to return

        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflows WHERE id = 'closing'"
                + " AND status = 'completed' AND result = '42'::jsonb AND lease_owner IS NULL"
                + " AND lease_expires_at IS NULL AND attempts = 0 AND last_error IS NULL AND completed_at IS NOT NULL"))
                .isEqualTo(1);
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflow_awakeables WHERE id = 'closing'"
                + " AND status = 'abandoned' AND completed_at IS NOT NULL")).isEqualTo(1);
        assertThat(status("parked")).isEqualTo("completed"); // a suspended run's completion: the checks one by one
        assertThat(journalled("closing", "e.event_type = 'WorkflowCompleted' AND e.stream_version = 2")).isEqualTo(1);
    }

    @Test
    void completions_of_several_instances_in_one_batch_each_close_their_own_row_and_nothing_else() throws Exception {
        long first = started("first-done");
        long second = started("second-done");
        long fenced = started("fenced-done");
        long busy = started("busy-stepping");
        for (String id : List.of("first-done", "second-done", "fenced-done")) {
            execute("INSERT INTO \"" + store.schema() + "\".workflow_awakeables (awakeable_id, name, id, generation,"
                    + " label) VALUES (gen_random_uuid(), 'batch', '" + id + "', 0, 'approval')");
        }
        JournalWrite a = JournalWrite.completion("batch", "first-done", 0,
                Ids.entryId("batch", "first-done", 0, "__completed__"), "\"one\"", first);
        JournalWrite b = JournalWrite.completion("batch", "second-done", 0,
                Ids.entryId("batch", "second-done", 0, "__completed__"), "\"two\"", second);
        JournalWrite c = JournalWrite.completion("batch", "fenced-done", 0,
                Ids.entryId("batch", "fenced-done", 0, "__completed__"), "\"three\"", fenced + 1);

        assertThat(instances.journal(List.of(a, entry("busy-stepping", "s", busy), c, b)))
                .extracting(BatchJournal.Outcome::kind)
                .containsExactly("appended", "appended", "lease_lost", "appended");

        for (String[] done : List.of(new String[]{"first-done", "\"one\""}, new String[]{"second-done", "\"two\""})) {
            assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflows WHERE id = '" + done[0]
                    + "' AND status = 'completed' AND result = '" + done[1] + "'::jsonb AND lease_owner IS NULL"
                    + " AND completed_at IS NOT NULL")).as(done[0]).isEqualTo(1);
            assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflow_awakeables WHERE id = '"
                    + done[0] + "' AND status = 'abandoned'")).as(done[0]).isEqualTo(1);
        }
        assertThat(status("fenced-done")).isEqualTo("running"); // a stale lease writes nothing
        assertThat(status("busy-stepping")).isEqualTo("running");
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflows WHERE id = 'fenced-done'"
                + " AND lease_owner = 'me' AND result IS NULL")).isEqualTo(1);
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflow_awakeables WHERE id = 'fenced-done'"
                + " AND status = 'pending'")).isEqualTo(1);
        assertThat(query("SELECT count(DISTINCT e.tx_id) FROM \"" + store.schema() + "\".events e JOIN \""
                + store.schema() + "\".streams s USING (stream_id) WHERE s.stream_name IN ('$wf-batch-first-done',"
                + " '$wf-batch-second-done', '$wf-batch-busy-stepping') AND e.event_type <> 'WorkflowStarted'"))
                .isEqualTo(1);
        assertThat(journalled("fenced-done", "true")).isEqualTo(1);
    }

    @Test
    void a_start_whose_stream_outlived_its_instance_row_appends_to_that_stream() throws Exception {
        execute("INSERT INTO \"" + store.schema() + "\".streams (stream_name, category, stream_hash)"
                + " VALUES ('$wf-batch-ghost', '$wf', 0)");
        JournalWrite start = JournalWrite.start("batch", "ghost", "5", UUID.randomUUID(), null, "me",
                Duration.ofMinutes(5));

        List<BatchJournal.Outcome> out = instances.journal(List.of(start));
        assertThat(out).extracting(BatchJournal.Outcome::kind).containsExactly("created");
        assertThat(
                query("SELECT count(*) FROM \"" + store.schema() + "\".streams WHERE stream_name = '$wf-batch-ghost'"))
                .isEqualTo(1);
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflows WHERE id = 'ghost'"
                + " AND input = '5'::jsonb AND lease_epoch = " + out.get(0).started().epoch())).isEqualTo(1);
        assertThat(journalled("ghost", "e.event_type = 'WorkflowStarted' AND e.stream_version = 1")).isEqualTo(1);
    }

    @Test
    void starts_share_the_transaction_with_steps_and_get_what_a_lone_start_gets() throws Exception {
        long stepper = started("stepper");
        started("twice");
        JournalWrite fresh = JournalWrite.start("batch", "new", "{\"n\":1}", UUID.randomUUID(), null, "me",
                Duration.ofMinutes(5));
        JournalWrite again = JournalWrite.start("batch", "twice", "7", UUID.randomUUID(), null, "me",
                Duration.ofMinutes(5));
        JournalWrite locked = JournalWrite.start("batch", "locked", "1", UUID.randomUUID(), null, "me",
                Duration.ofMinutes(5));
        JournalWrite unowned = JournalWrite.start("batch", "unowned", "2", UUID.randomUUID(),
                new Instances.Key("batch", "stepper"), null, Duration.ofMinutes(5));
        try (Connection holder = POSTGRES.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            try (PreparedStatement lock = holder.prepareStatement("SELECT \"" + store.schema() + "\".wf_lock(?, ?)")) {
                lock.setString(1, "batch");
                lock.setString(2, "locked");
                lock.execute(); // someone else is starting this id right now
            }
            List<BatchJournal.Outcome> out = instances.journal(List.of(fresh, entry("stepper", "s", stepper), again,
                    locked, unowned));
            holder.rollback();
            assertThat(out).extracting(BatchJournal.Outcome::kind)
                    .containsExactly("created", "appended", "exists", "busy", "created");
            Instances.Started created = out.get(0).started();
            assertThat(created.created()).isTrue();
            assertThat(created.status()).isEqualTo(WorkflowStatus.RUNNING);
            assertThat(created.epoch()).isPositive(); // leased to its starter, which runs it at once
            Instances.Started existing = out.get(2).started();
            assertThat(existing.created()).isFalse();
            assertThat(existing.existingInput()).isEqualTo("1"); // compared with "7" by the caller
            assertThat(out.get(4).started().epoch()).isZero(); // no owner: left for a worker to claim
        }
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflows WHERE id = 'new'"
                + " AND input = '{\"n\":1}'::jsonb AND lease_owner = 'me' AND lease_epoch > 0")).isEqualTo(1);
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflows WHERE id = 'unowned'"
                + " AND parent_id = 'stepper' AND lease_owner IS NULL")).isEqualTo(1);
        assertThat(query("SELECT count(*) FROM \"" + store.schema() + "\".workflows WHERE id = 'locked'")).isZero();
        assertThat(query("SELECT count(DISTINCT e.tx_id) FROM \"" + store.schema() + "\".events e JOIN \""
                + store.schema() + "\".streams s USING (stream_id) WHERE (s.stream_name IN ('$wf-batch-new',"
                + " '$wf-batch-unowned') AND e.event_type = 'WorkflowStarted')"
                + " OR (s.stream_name = '$wf-batch-stepper' AND e.event_type = 'StepRecorded')")).isEqualTo(1);
        assertThat(journalled("new", "e.event_type = 'WorkflowStarted' AND e.stream_version = 1"
                + " AND e.data = '{\"input\":{\"n\":1},\"generation\":0}'::jsonb")).isEqualTo(1);
    }

    @Test
    void a_batch_inside_a_transaction_that_already_wrote_is_refused_whole() throws Exception {
        long epoch = started("late");
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement write = c.prepareStatement("UPDATE \"" + store.schema()
                    + "\".workflows SET updated_at = now() WHERE id = 'late'")) {
                write.executeUpdate();
            }
            try (PreparedStatement batch = c.prepareStatement("SELECT \"" + store.schema()
                    + "\".wf_journal(ARRAY['batch'], ARRAY['late'], ARRAY[0], ARRAY[gen_random_uuid()],"
                    + " ARRAY['StepRecorded'], ARRAY['{}'::jsonb], ARRAY[" + epoch + "::bigint], ARRAY[NULL::text],"
                    + " ARRAY[NULL::jsonb], ARRAY[NULL::text], ARRAY[NULL::text], ARRAY[NULL::text], ARRAY[NULL::bigint],"
                    + " ARRAY[NULL::uuid], ARRAY[NULL::text])")) {
                org.assertj.core.api.Assertions.assertThatThrownBy(batch::executeQuery)
                        .isInstanceOf(SQLException.class).hasMessageContaining("already wrote");
            }
            c.rollback();
        }
        assertThat(steps("late")).isZero();
    }

    @Test
    void the_database_names_journal_streams_as_the_engine_does() throws Exception {
        for (int generation : new int[]{0, 1, 12}) {
            try (Connection c = POSTGRES.dataSource().getConnection();
                    PreparedStatement ps = c.prepareStatement("SELECT \"" + store.schema() + "\".wf_stream(?, ?, ?)")) {
                ps.setString(1, "orders");
                ps.setString(2, "o-1");
                ps.setInt(3, generation);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo(Ids.stream("orders", "o-1", generation));
                }
            }
        }
    }

    private static String status(String id) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT status FROM \"" + store.schema()
                        + "\".workflows WHERE name = 'batch' AND id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.execute();
        }
    }

    private static long steps(String id) throws SQLException {
        return journalled(id, "e.event_type = 'StepRecorded'");
    }

    /** Entries {@code e} of instance {@code id}'s generation-0 journal stream that match {@code condition}. */
    private static long journalled(String id, String condition) throws SQLException {
        return query("SELECT count(*) FROM \"" + store.schema() + "\".events e JOIN \"" + store.schema()
                + "\".streams s USING (stream_id) WHERE s.stream_name = '$wf-batch-" + id + "' AND (" + condition
                + ")");
    }

    private static long transactions(String a, String b) throws SQLException {
        return query("SELECT count(DISTINCT e.tx_id) FROM \"" + store.schema() + "\".events e JOIN \"" + store.schema()
                + "\".streams s USING (stream_id) WHERE s.stream_name IN ('$wf-batch-" + a + "', '$wf-batch-" + b
                + "') AND e.event_type = 'StepRecorded'");
    }

    private static long query(String sql) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement ps = c.prepareStatement(sql);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
