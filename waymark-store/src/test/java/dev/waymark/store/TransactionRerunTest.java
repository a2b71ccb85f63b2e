package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Appends in {@code inTransaction} after statements that give the transaction its id (nextval,
 * SELECT ... FOR UPDATE, a temporary table, an earlier write, an earlier append): accepted every
 * time, because the work runs again once with the streams' locks taken first.
 */
class TransactionRerunTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        POSTGRES.execute("CREATE SEQUENCE order_numbers; CREATE TABLE accounts (id text PRIMARY KEY, balance int);"
                + " INSERT INTO accounts VALUES ('a', 100), ('b', 100); CREATE TABLE audit (note text)");
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static void run(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static long number(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT nextval('order_numbers')")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void an_append_after_nextval_is_accepted_every_time() throws SQLException {
        // before: refused whenever nextval logged ahead (the first call, then one in 32)
        for (int i = 0; i < 100; i++) {
            String stream = "numbered-" + i;
            long n = store.inTransaction(tx -> {
                long next = number(tx.connection());
                tx.append(stream, ExpectedVersion.noStream(),
                        List.of(EventData.json("Numbered", "{\"n\":" + next + "}")));
                return next;
            });
            assertThat(store.readStreamForward(stream, 0, 10)).singleElement()
                    .satisfies(e -> assertThat(e.data()).contains(String.valueOf(n)));
        }
    }

    @Test
    void an_append_after_select_for_update_is_accepted_and_the_work_runs_twice() throws SQLException {
        AtomicInteger runs = new AtomicInteger();
        // before: AppendRefusedException "already wrote", every time
        int balance = store.inTransaction(tx -> {
            runs.incrementAndGet();
            int b;
            try (PreparedStatement p = tx.connection().prepareStatement(
                    "SELECT balance FROM accounts WHERE id = 'a' FOR UPDATE"); ResultSet rs = p.executeQuery()) {
                rs.next();
                b = rs.getInt(1);
            }
            tx.append("account-a", ExpectedVersion.any(),
                    List.of(EventData.json("Checked", "{\"balance\":" + b + "}")));
            return b;
        });
        assertThat(balance).isEqualTo(100);
        assertThat(runs).hasValue(2);
        assertThat(store.readStreamForward("account-a", 0, 10)).hasSize(1);
    }

    @Test
    void an_append_after_creating_a_temporary_table_is_accepted() throws SQLException {
        store.inTransaction(tx -> {
            run(tx.connection(), "CREATE TEMP TABLE scratch (n int) ON COMMIT DROP");
            run(tx.connection(), "INSERT INTO scratch VALUES (1)");
            return tx.append("scratched-1", ExpectedVersion.noStream(), events(1));
        });
        assertThat(store.readStreamForward("scratched-1", 0, 10)).hasSize(1);
    }

    @Test
    void an_append_after_an_earlier_write_is_accepted_and_commits_with_it() throws SQLException {
        store.inTransaction(tx -> {
            run(tx.connection(), "INSERT INTO audit VALUES ('written first')");
            return tx.append("audited-1", ExpectedVersion.noStream(), events(2));
        });
        assertThat(store.readStreamForward("audited-1", 0, 10)).hasSize(2);
        assertThat(StoreFixture.count(POSTGRES.dataSource(), "SELECT count(*) FROM audit WHERE note = 'written first'"))
                .isOne();
    }

    @Test
    void several_appends_in_one_transaction_commit_together_in_order() {
        AtomicInteger runs = new AtomicInteger();
        // before: the second append was refused blaming "an earlier write"
        List<AppendResult> results = store.inTransaction(tx -> {
            runs.incrementAndGet();
            AppendResult first = tx.append("pair-a", ExpectedVersion.noStream(), events(1));
            AppendResult again = tx.append("pair-a", ExpectedVersion.exactly(1), events(2));
            AppendResult second = tx.append("pair-b", ExpectedVersion.noStream(), events(1));
            return List.of(first, again, second);
        });
        assertThat(runs).as("the work ran again once, with both streams locked first").hasValue(2);
        assertThat(results).extracting(AppendResult::streamVersion).containsExactly(1L, 3L, 1L);
        assertThat(results.get(0).lastPosition()).isLessThan(results.get(1).firstPosition());
        assertThat(results.get(1).lastPosition()).isLessThan(results.get(2).firstPosition());
        assertThat(store.readStreamForward("pair-a", 0, 10)).extracting(RecordedEvent::streamVersion)
                .containsExactly(1L, 2L, 3L);
        assertThat(store.readStreamForward("pair-b", 0, 10)).hasSize(1);
    }

    @Test
    void two_appends_to_one_stream_need_no_second_run() throws SQLException {
        AtomicInteger runs = new AtomicInteger();
        store.inTransaction(tx -> {
            runs.incrementAndGet();
            tx.append("same-1", ExpectedVersion.noStream(), events(1));
            run(tx.connection(), "INSERT INTO audit VALUES ('between')");
            return tx.append("same-1", ExpectedVersion.exactly(1), events(1));
        });
        assertThat(runs).hasValue(1);
        assertThat(store.readStreamForward("same-1", 0, 10)).hasSize(2);
    }

    @Test
    void a_work_that_catches_the_refusal_and_returns_still_runs_again_and_commits() throws SQLException {
        AtomicInteger runs = new AtomicInteger();
        String outcome = store.inTransaction(tx -> {
            runs.incrementAndGet();
            run(tx.connection(), "INSERT INTO audit VALUES ('caught')");
            try {
                tx.append("caught-1", ExpectedVersion.noStream(), events(1));
                return "appended";
            } catch (AppendRefusedException refused) {
                return "refused";
            }
        });
        assertThat(outcome).isEqualTo("appended");
        assertThat(runs).hasValue(2);
        assertThat(store.readStreamForward("caught-1", 0, 10)).hasSize(1);
    }

    @Test
    void a_run_that_appends_to_other_streams_than_the_run_before_fails_naming_cause_and_remedy() {
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            int run = runs.incrementAndGet(); // a stream named after something that changes per run
            run(tx.connection(), "INSERT INTO audit VALUES ('moving target')");
            return tx.append("moving-" + run, ExpectedVersion.noStream(), events(1));
        }))
                .isInstanceOf(AppendRefusedException.class)
                .hasMessageContaining("stream 'moving-2'")
                .hasMessageContaining("other streams than on the run before")
                .hasMessageContaining("'moving-1'")
                .hasMessageContaining("must not change from run to run");
        assertThat(runs).hasValue(2);
        assertThat(store.streamInfo("moving-1")).isEmpty();
        assertThat(store.streamInfo("moving-2")).isEmpty();
        assertThat(StoreFixture.count(POSTGRES.dataSource(), "SELECT count(*) FROM audit WHERE note = 'moving target'"))
                .isZero();
    }

    @Test
    void a_work_that_first_reaches_two_streams_after_its_first_write_runs_once_more_per_stream() throws SQLException {
        AtomicInteger runs = new AtomicInteger();
        store.inTransaction(tx -> {
            runs.incrementAndGet();
            run(tx.connection(), "INSERT INTO audit VALUES ('two after')");
            tx.append("late-a", ExpectedVersion.noStream(), events(1));
            return tx.append("late-b", ExpectedVersion.noStream(), events(1));
        });
        assertThat(runs).hasValue(3);
        assertThat(store.readStreamForward("late-a", 0, 10)).hasSize(1);
        assertThat(store.readStreamForward("late-b", 0, 10)).hasSize(1);
        assertThat(StoreFixture.count(POSTGRES.dataSource(), "SELECT count(*) FROM audit WHERE note = 'two after'"))
                .isOne();
    }

    @Test
    void one_multi_stream_append_after_the_first_write_needs_a_single_further_run() throws SQLException {
        AtomicInteger runs = new AtomicInteger();
        store.inTransaction(tx -> {
            runs.incrementAndGet();
            run(tx.connection(), "INSERT INTO audit VALUES ('multi after')");
            return tx.appendMultiStream(List.of(StreamAppend.of("multi-a", ExpectedVersion.noStream(), events(1)),
                    StreamAppend.of("multi-b", ExpectedVersion.noStream(), events(1)),
                    StreamAppend.of("multi-c", ExpectedVersion.noStream(), events(1))));
        });
        assertThat(runs).hasValue(2);
        assertThat(store.readStreamForward("multi-c", 0, 10)).hasSize(1);
    }

    @Test
    void a_work_that_reaches_a_new_stream_on_every_run_stops_after_the_last_run_naming_the_remedy() {
        AtomicInteger runs = new AtomicInteger();
        assertThatThrownBy(() -> store.inTransaction(tx -> {
            runs.incrementAndGet();
            run(tx.connection(), "INSERT INTO audit VALUES ('many after')");
            for (int i = 0; i < EventStore.MAX_TRANSACTION_RUNS; i++) {
                tx.append("many-" + i, ExpectedVersion.noStream(), events(1));
            }
            return null;
        }))
                .isInstanceOf(AppendRefusedException.class)
                .hasMessageContaining("each of its " + EventStore.MAX_TRANSACTION_RUNS + " runs")
                .hasMessageContaining("appendMultiStream");
        assertThat(runs).hasValue(EventStore.MAX_TRANSACTION_RUNS);
        assertThat(store.streamInfo("many-0")).isEmpty();
    }

    @Test
    void an_append_on_the_callers_own_connection_after_a_write_is_refused_naming_the_causes_and_the_remedy()
            throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            run(c, "INSERT INTO audit VALUES ('own connection')");
            assertThatThrownBy(() -> store.append(c, "own-1", ExpectedVersion.any(), events(1)))
                    .isInstanceOf(AppendRefusedException.class)
                    .hasMessageContaining("nextval()")
                    .hasMessageContaining("FOR UPDATE")
                    .hasMessageContaining("temporary table")
                    .hasMessageContaining("earlier write")
                    .hasMessageContaining("lockStreams")
                    .hasMessageContaining("inTransaction");
            c.rollback();
        }
    }

    @Test
    void locking_the_streams_first_lets_the_callers_own_transaction_append_after_other_writes() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            store.lockStreams(c, List.of("own-2", "own-3"));
            long n = number(c);
            run(c, "INSERT INTO audit VALUES ('locked first')");
            store.append(c, "own-2", ExpectedVersion.noStream(), List.of(EventData.json("N", "{\"n\":" + n + "}")));
            store.append(c, "own-3", ExpectedVersion.noStream(), events(1));
            c.commit();
        }
        assertThat(store.readStreamForward("own-2", 0, 10)).hasSize(1);
        assertThat(store.readStreamForward("own-3", 0, 10)).hasSize(1);
    }

    @Test
    void locking_streams_after_the_transaction_has_its_id_is_refused() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            run(c, "INSERT INTO audit VALUES ('too late')");
            assertThatThrownBy(() -> store.lockStreams(c, List.of("own-4")))
                    .isInstanceOf(AppendRefusedException.class)
                    .hasMessageContaining("first statement");
            c.rollback();
        }
    }
}
