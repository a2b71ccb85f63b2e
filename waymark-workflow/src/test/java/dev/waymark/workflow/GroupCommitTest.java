package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Group commit: runs journaling a step at the same moment share transactions, and every step is
 * still journaled exactly once and run exactly once; concurrent starts share transactions too, and
 * each returns only once its instance is committed; with it off, each entry is its own transaction.
 */
class GroupCommitTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int WORKFLOWS = 24;
    private static final int STEPS = 10;
    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    /** Every run waits at its first step until all have reached it, then all journal it at once. */
    private static WorkflowRegistry registry(String name, WorkflowTesting.Effects effects, CountDownLatch together) {
        return new WorkflowRegistry().register(name, Integer.class, Integer.class, (ctx, in) -> {
            int sum = 0;
            for (int i = 0; i < STEPS; i++) {
                final int k = i;
                sum += ctx.step("s" + i, Integer.class, () -> {
                    effects.hit(ctx.workflowId() + "/s" + k);
                    if (k == 0) {
                        together.countDown();
                        together.await(30, TimeUnit.SECONDS);
                    }
                    return k;
                });
            }
            return sum;
        });
    }

    private static void runAll(WorkflowEngine engine, String name) throws Exception {
        List<WorkflowHandle<Integer>> handles = new ArrayList<>();
        for (int w = 0; w < WORKFLOWS; w++) {
            handles.add(engine.start(name, "w" + w, w, Integer.class));
        }
        for (WorkflowHandle<Integer> h : handles) {
            assertThat(h.await(WAIT)).isEqualTo(45);
        }
    }

    @Test
    void concurrent_steps_share_transactions_and_each_is_journaled_and_run_once() throws Exception {
        WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
        CountDownLatch together = new CountDownLatch(WORKFLOWS);
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry("grouped", effects, together))
                .build()) {
            runAll(engine, "grouped");
        }
        for (int w = 0; w < WORKFLOWS; w++) {
            for (int i = 0; i < STEPS; i++) {
                assertThat(effects.count("w" + w + "/s" + i)).as("w%d/s%d", w, i).isEqualTo(1);
            }
        }
        assertThat(stepEntries("grouped")).isEqualTo(WORKFLOWS * STEPS);
        assertThat(distinctSteps("grouped")).isEqualTo(WORKFLOWS * STEPS);
        assertThat(largestTransaction(steps("grouped"))).isGreaterThan(1);
    }

    @Test
    void with_group_commit_off_every_step_is_its_own_transaction() throws Exception {
        WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
        CountDownLatch together = new CountDownLatch(WORKFLOWS);
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry("alone", effects, together))
                .groupCommit(false).build()) {
            runAll(engine, "alone");
        }
        assertThat(stepEntries("alone")).isEqualTo(WORKFLOWS * STEPS);
        assertThat(largestTransaction(steps("alone"))).isEqualTo(1);
    }

    @Test
    void concurrent_awakeable_creations_share_transactions_and_each_row_commits_with_its_entry() throws Exception {
        CountDownLatch together = new CountDownLatch(WORKFLOWS);
        WorkflowRegistry registry = new WorkflowRegistry().register("waiting", Integer.class, String.class,
                (ctx, in) -> {
                    ctx.step("ready", Integer.class, () -> {
                        together.countDown();
                        together.await(30, TimeUnit.SECONDS);
                        return 0;
                    });
                    return ctx.awakeable("approval", String.class).await();
                });
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).build()) {
            List<WorkflowHandle<String>> handles = new ArrayList<>();
            for (int w = 0; w < WORKFLOWS; w++) {
                handles.add(engine.start("waiting", "w" + w, w, String.class));
            }
            String rows = "FROM \"" + store.schema() + "\".workflow_awakeables a WHERE a.name = 'waiting'";
            org.awaitility.Awaitility.await().atMost(WAIT)
                    .until(() -> WorkflowTesting.count(POSTGRES, "SELECT count(*) " + rows) == WORKFLOWS);
            // each row committed in its entry's transaction (a fresh server: xids still fit 32 bits)
            String awkEntries = entries("waiting", "StepRecorded") + " AND e.data->>'step' = 'awkid:approval'";
            assertThat(WorkflowTesting.count(POSTGRES, "SELECT count(*) " + awkEntries + " AND EXISTS (SELECT 1 "
                    + rows + " AND a.awakeable_id::text = e.data->>'result' AND s.stream_name = '$wf-waiting-' || a.id"
                    + " AND a.xmin::text = (e.tx_id::text::bigint % 4294967296)::text)")).isEqualTo(WORKFLOWS);
            assertThat(largestTransaction(awkEntries)).isGreaterThan(1);
            for (java.util.UUID id : WorkflowTesting.uuids(POSTGRES, "SELECT a.awakeable_id " + rows)) {
                assertThat(engine.completeAwakeable(id, "yes"))
                        .isEqualTo(dev.waymark.workflow.awakeable.AwakeableOutcome.SETTLED);
            }
            for (WorkflowHandle<String> h : handles) {
                assertThat(h.await(WAIT)).isEqualTo("yes");
            }
        }
    }

    /** Starts {@code WORKFLOWS} instances from as many threads at once; each checks its row is committed. */
    private static void startTogether(WorkflowEngine engine, String name) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        java.util.Queue<Throwable> failures = new java.util.concurrent.ConcurrentLinkedQueue<>();
        for (int w = 0; w < WORKFLOWS; w++) {
            String id = "w" + w;
            int input = w;
            threads.add(Thread.ofPlatform().name("start-" + name + "-" + id).start(() -> {
                try {
                    go.await();
                    engine.start(name, id, input, Integer.class);
                    // durable on return: another connection sees the row and its journal's first entry
                    assertThat(WorkflowTesting.count(POSTGRES, "SELECT count(*) FROM \"" + store.schema()
                            + "\".workflows w JOIN \"" + store.schema() + "\".streams s ON s.stream_name = '$wf-"
                            + name + "-" + id + "' JOIN \"" + store.schema() + "\".events e USING (stream_id)"
                            + " WHERE w.name = '" + name + "' AND w.id = '" + id + "' AND w.input = '" + input
                            + "'::jsonb AND e.event_type = 'WorkflowStarted'")).isEqualTo(1);
                } catch (Throwable t) {
                    failures.add(t);
                }
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join(WAIT.toMillis());
            // a start still running after the wait would otherwise pass with no failure recorded
            assertThat(t.isAlive()).as(t.getName() + " still running after " + WAIT).isFalse();
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void concurrent_starts_share_transactions_and_each_is_durable_when_start_returns() throws Exception {
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry("starts", new WorkflowTesting.Effects(),
                new CountDownLatch(0))).runOnStart(false).build()) {
            startTogether(engine, "starts");
            startTogether(engine, "starts"); // idempotent: the same ids and inputs again create nothing
        }
        assertThat(WorkflowTesting.count(POSTGRES, "SELECT count(*) " + starts("starts"))).isEqualTo(WORKFLOWS);
        assertThat(largestTransaction(starts("starts"))).isGreaterThan(1);
    }

    @Test
    void with_group_commit_off_every_start_is_its_own_transaction() throws Exception {
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry("lone", new WorkflowTesting.Effects(),
                new CountDownLatch(0))).runOnStart(false).groupCommit(false).build()) {
            startTogether(engine, "lone");
        }
        assertThat(WorkflowTesting.count(POSTGRES, "SELECT count(*) " + starts("lone"))).isEqualTo(WORKFLOWS);
        assertThat(largestTransaction(starts("lone"))).isEqualTo(1);
    }

    /** The journal entries of type {@code type} of the instances of workflow {@code name}. */
    private static String entries(String name, String type) {
        return "FROM \"" + store.schema() + "\".events e JOIN \"" + store.schema() + "\".streams s USING (stream_id)"
                + " WHERE s.stream_name LIKE '$wf-" + name + "-%' AND e.event_type = '" + type + "'";
    }

    private static String steps(String name) {
        return entries(name, "StepRecorded");
    }

    private static String starts(String name) {
        return entries(name, "WorkflowStarted");
    }

    private static long stepEntries(String name) {
        return WorkflowTesting.count(POSTGRES, "SELECT count(*) " + steps(name));
    }

    private static long distinctSteps(String name) {
        return WorkflowTesting.count(POSTGRES,
                "SELECT count(DISTINCT (s.stream_name, e.data->>'step')) " + steps(name));
    }

    /** The most entries of {@code entries} that any one transaction journaled. */
    private static long largestTransaction(String entries) {
        return WorkflowTesting.count(POSTGRES, "SELECT max(n) FROM (SELECT count(*) AS n " + entries
                + " GROUP BY e.tx_id) t");
    }
}
