package dev.waymark.workflow.resume;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One default lease for every run, whoever runs it (so crash recovery takes as long either way), and
 * the resume loop's timing as README documents it: without push a pass every {@code pollInterval};
 * with push also a pass on every wake of the store's signal, its fallback tick included.
 */
class LeaseAndPollDefaultsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final CountDownLatch entered = new CountDownLatch(2);
    private static final CountDownLatch release = new CountDownLatch(1);

    private static EventStore store;
    private static WorkflowRegistry registry;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        registry = new WorkflowRegistry()
                .register("held", String.class, String.class, (ctx, in) -> ctx.step("hold", String.class, () -> {
                    entered.countDown();
                    release.await(60, TimeUnit.SECONDS);
                    return "released";
                }))
                .register("quick", String.class, String.class, (ctx, in) -> in);
    }

    @AfterAll
    static void tearDown() {
        release.countDown();
        store.close();
    }

    @Test
    void an_instance_run_by_the_engine_and_one_run_by_a_resume_worker_are_leased_for_the_same_default_time()
            throws Exception {
        assertThat(ResumeOptions.defaults().leaseTtl()).isEqualTo(WorkflowEngine.DEFAULT_LEASE_TTL)
                .isEqualTo(Duration.ofSeconds(30));
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).build();
                WorkflowEngine resumeOnly = WorkflowEngine.builder(store, registry).runOnStart(false).build();
                ResumeWorker worker = resumeOnly.resumeWorker(ResumeOptions.defaults()).start()) {
            engine.start("held", "by-engine", "x", String.class);
            resumeOnly.start("held", "by-worker", "x", String.class);
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(owner("by-worker")).isEqualTo(worker.owner());
            long byEngine = leaseLeftMillis("by-engine");
            long byWorker = leaseLeftMillis("by-worker");
            // before: 30 s and 60 s, so a crash was recovered after half a minute or after a whole one
            assertThat(byEngine).isBetween(25_000L, 30_000L);
            assertThat(byWorker).isBetween(25_000L, 30_000L);
            release.countDown();
        }
    }

    @Test
    void without_push_a_pass_runs_every_poll_interval_and_nothing_the_store_signals_starts_one() {
        try (EventStore ticking = EventStore.builder(POSTGRES.dataSource()).fallbackPoll(Duration.ofMillis(20)).build();
                WorkflowEngine engine = WorkflowEngine.builder(ticking, registry).runOnStart(false).build()) {
            AtomicInteger passes = new AtomicInteger();
            try (ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().push(false)
                    .pollInterval(Duration.ofHours(1)).listener(counting(passes)).build()).start()) {
                await().atMost(WAIT).until(() -> passes.get() == 1);
                engine.start("quick", "unnoticed", "x", String.class); // an append signalled on this store
                await("no second pass while the store ticks every 20 ms and signals a start")
                        .during(Duration.ofSeconds(1))
                        .atMost(Duration.ofSeconds(3)).until(() -> passes.get() == 1);
            }
            try (ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().push(false)
                    .pollInterval(Duration.ofMillis(100)).listener(counting(passes)).build()).start()) {
                await("passes every 100 ms").atMost(WAIT).until(() -> passes.get() >= 5);
            }
        }
    }

    @Test
    void with_push_a_pass_also_runs_on_each_wake_of_the_store_and_its_fallback_tick() throws Exception {
        AtomicInteger passes = new AtomicInteger();
        // the store's tick every 100 ms, the worker's poll an hour: the tick alone starts passes
        try (EventStore ticking = EventStore.builder(POSTGRES.dataSource()).fallbackPoll(Duration.ofMillis(100))
                .build();
                WorkflowEngine engine = WorkflowEngine.builder(ticking, registry).runOnStart(false).build();
                ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().pollInterval(Duration.ofHours(1))
                        .listener(counting(passes)).build()).start()) {
            await("passes on the store's 100 ms tick").atMost(WAIT).until(() -> passes.get() >= 5);
        }
        // the store's tick every 10 minutes, the worker's poll 100 ms: the poll is the push loop's fallback
        passes.set(0);
        try (EventStore quiet = EventStore.builder(POSTGRES.dataSource()).fallbackPoll(Duration.ofMinutes(10)).build();
                WorkflowEngine engine = WorkflowEngine.builder(quiet, registry).runOnStart(false).build();
                ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().pollInterval(Duration.ofMillis(100))
                        .listener(counting(passes)).build()).start()) {
            await("passes every 100 ms without any signal").atMost(WAIT).until(() -> passes.get() >= 5);
        }
        // and a start signalled on the store is run at once, whatever the tick and the poll
        try (EventStore quiet = EventStore.builder(POSTGRES.dataSource()).fallbackPoll(Duration.ofMinutes(10)).build();
                WorkflowEngine engine = WorkflowEngine.builder(quiet, registry).runOnStart(false).build();
                ResumeWorker worker = engine
                        .resumeWorker(ResumeOptions.builder().pollInterval(Duration.ofHours(1)).build())
                        .start()) {
            assertThat(engine.start("quick", "pushed", "ran", String.class).await(Duration.ofSeconds(5)))
                    .isEqualTo("ran");
        }
    }

    private static ResumeListener counting(AtomicInteger passes) {
        return new ResumeListener() {
            @Override
            public void onPass(ResumeSummary summary, Duration elapsed, long pendingAwakeables, long backlog) {
                passes.incrementAndGet();
            }
        };
    }

    private static String owner(String id) {
        return query("SELECT lease_owner FROM waymark.workflows WHERE name = 'held' AND id = ?", id);
    }

    private static long leaseLeftMillis(String id) {
        return Long.parseLong(query("SELECT (EXTRACT(EPOCH FROM (lease_expires_at - now())) * 1000)::bigint::text"
                + " FROM waymark.workflows WHERE name = 'held' AND id = ?", id));
    }

    private static String query(String sql, String id) {
        try (Connection c = POSTGRES.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("a row for " + id).isTrue();
                return rs.getString(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
