package dev.waymark.workflow.resume;

import dev.waymark.core.RetryPolicy;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.status.WorkflowStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The documented effect of each {@link ResumeOptions} option, observed on real instances: the crash
 * backoff a worker writes (doubling, capped, its own rather than the engine's), the concurrency of a
 * pass, and the batch limit with the loop's immediate next pass after a full batch.
 */
class ResumeOptionsEffectTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Map<String, AtomicInteger> bodyRuns = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> stepRuns = new ConcurrentHashMap<>();
    /** The barrier the "meet" workflows' step waits at; set per test. */
    private static volatile CyclicBarrier meeting;
    /** Counted down by each "paced" step; the first steps wait until it reaches zero (a peer runs too). */
    private static volatile CountDownLatch peers = new CountDownLatch(0);
    private static final AtomicInteger inFlight = new AtomicInteger();
    private static final AtomicInteger maxInFlight = new AtomicInteger();

    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("alwaysCrashes", String.class, String.class, (ctx, in) -> {
                    bodyRuns.computeIfAbsent(ctx.workflowId(), k -> new AtomicInteger()).incrementAndGet();
                    throw new IllegalStateException("always " + ctx.workflowId());
                })
                // each instance's step waits (10 s at most) until three instances are in it at once
                .register("meet", String.class, String.class, (ctx, in) -> ctx.step("meet", String.class, () -> {
                    stepRuns.computeIfAbsent(ctx.workflowId(), k -> new AtomicInteger()).incrementAndGet();
                    meeting.await(10, TimeUnit.SECONDS);
                    return "met " + in;
                }))
                // each instance's step waits for a peer in its step at the same time, then holds 300 ms
                // more, in which a worker above its concurrency would start further instances (the step crashes if one does)
                .register("paced", String.class, String.class, (ctx, in) -> ctx.step("hold", String.class, () -> {
                    stepRuns.computeIfAbsent(ctx.workflowId(), k -> new AtomicInteger()).incrementAndGet();
                    maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                    try {
                        peers.countDown();
                        if (!peers.await(10, TimeUnit.SECONDS)) {
                            throw new IllegalStateException("no peer ran beside " + ctx.workflowId());
                        }
                        // 300 ms in which a worker above its concurrency would start a third: fails at once if one does
                        await().pollInterval(Duration.ofMillis(10)).during(Duration.ofMillis(300))
                                .atMost(Duration.ofSeconds(2)).until(() -> inFlight.get() <= 2);
                    } finally {
                        inFlight.decrementAndGet();
                    }
                    return "held " + in;
                }))
                .register("quick", String.class, String.class, (ctx, in) -> ctx.step("only", String.class, () -> {
                    stepRuns.computeIfAbsent(ctx.workflowId(), k -> new AtomicInteger()).incrementAndGet();
                    return "ok " + in;
                }));
        // start() leaves every run to the resume workers under test. The engine's own crash policy is
        // deliberately different from the workers': a worker must apply its own options.
        engine = WorkflowEngine.builder(store, registry).runOnStart(false)
                .retry(RetryPolicy.exponential(1, Duration.ofSeconds(7), Duration.ofSeconds(60))).build();
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    @BeforeEach
    void clean() {
        POSTGRES.execute("DELETE FROM " + q() + ".workflows");
        POSTGRES.execute("DELETE FROM " + q() + ".workflow_awakeables");
    }

    @Test
    void the_crash_backoff_doubles_from_its_base_up_to_its_cap_and_hides_the_instance_until_due() {
        ResumeOptions options = ResumeOptions.builder().concurrency(1)
                .retry(RetryPolicy.exponential(6, Duration.ofSeconds(10), Duration.ofSeconds(30)))
                .leaseTtl(Duration.ofSeconds(5)).build();
        engine.start("alwaysCrashes", "c1", "x", String.class);
        // 10 s, 20 s, then 40 s, 80 s and 160 s capped at 30 s (long enough that the checks right after a
        // crash always run within its backoff, however slow the machine)
        long[] expectedMicros = {10_000_000, 20_000_000, 30_000_000, 30_000_000, 30_000_000};
        List<Long> written = new ArrayList<>();
        try (ResumeWorker worker = engine.resumeWorker(options)) {
            for (int attempt = 1; attempt <= 5; attempt++) {
                ResumeSummary crash = worker.resumeOnce();
                assertThat(crash).as("pass of crash %d", attempt)
                        .isEqualTo(new ResumeSummary(1, 1, 0, 0, 0, 0, 0, 1, 0, 0));
                WorkflowInfo after = info("c1");
                assertThat(after.status()).isEqualTo(WorkflowStatus.RUNNING);
                assertThat(after.attempts()).isEqualTo(attempt);
                assertThat(after.lastError()).contains("always c1");
                assertThat(after.leaseOwner()).as("lease released after the crash").isNull();
                long backoff = backoffMicros("c1");
                written.add(backoff);
                assertThat(backoff).as("next_attempt_at - updated_at after crash %d", attempt)
                        .isEqualTo(expectedMicros[attempt - 1]);

                // within the backoff the instance is invisible: the next pass neither finds nor runs it
                ResumeSummary early = worker.resumeOnce();
                assertThat(early).as("pass right after crash %d", attempt).isEqualTo(ResumeSummary.EMPTY);
                assertThat(bodyRuns.get("c1").get()).as("body runs after crash %d", attempt).isEqualTo(attempt);
                assertThat(info("c1").attempts()).isEqualTo(attempt);
                assertThat(engine.runNow("alwaysCrashes", "c1")).as("claimable during the backoff").isFalse();

                makeDue("c1"); // instead of waiting the backoff out; the assertion is on what the crash wrote
            }
            // the sixth crash spends the budget of six (not the default five): failed at once, no further backoff
            ResumeSummary last = worker.resumeOnce();
            assertThat(last).isEqualTo(new ResumeSummary(1, 1, 0, 0, 0, 1, 0, 1, 0, 0));
        }
        WorkflowInfo failed = info("c1");
        assertThat(failed.status()).isEqualTo(WorkflowStatus.FAILED);
        assertThat(failed.attempts()).isEqualTo(6);
        assertThat(failed.nextAttemptAt()).isNull();
        assertThat(failed.failure())
                .isEqualTo("crashed 6 times; last error: java.lang.IllegalStateException: always c1");
        assertThat(bodyRuns.get("c1").get()).isEqualTo(6);
    }

    @Test
    void a_pass_advances_as_many_instances_at_once_as_the_concurrency_allows() {
        meeting = new CyclicBarrier(3);
        for (int i = 1; i <= 3; i++) {
            engine.start("meet", "m" + i, "m" + i, String.class);
        }
        ResumeOptions options = ResumeOptions.builder().concurrency(3)
                .retry(ResumeOptions.DEFAULT_RETRY.withMaxAttempts(1))
                .leaseTtl(Duration.ofSeconds(30)).build();
        long t0 = System.nanoTime();
        ResumeSummary pass;
        try (ResumeWorker worker = engine.resumeWorker(options)) {
            pass = worker.resumeOnce();
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        // one at a time, the first step would time out at the barrier (and break it for the others)
        assertThat(pass).isEqualTo(new ResumeSummary(3, 3, 3, 0, 0, 0, 0, 0, 0, 0));
        for (int i = 1; i <= 3; i++) {
            WorkflowInfo m = info("meet", "m" + i);
            assertThat(m.status()).as("m" + i).isEqualTo(WorkflowStatus.COMPLETED);
            assertThat(stepRuns.get("m" + i).get()).as("step runs of m" + i).isEqualTo(1);
        }
    }

    @Test
    void a_pass_never_advances_more_instances_at_once_than_the_concurrency() {
        peers = new CountDownLatch(2);
        inFlight.set(0);
        maxInFlight.set(0);
        for (int i = 1; i <= 4; i++) {
            engine.start("paced", "p" + i, "p" + i, String.class);
        }
        ResumeOptions options = ResumeOptions.builder().concurrency(2)
                .retry(ResumeOptions.DEFAULT_RETRY.withMaxAttempts(1))
                .leaseTtl(Duration.ofSeconds(30)).build();
        ResumeSummary pass;
        try (ResumeWorker worker = engine.resumeWorker(options)) {
            pass = worker.resumeOnce();
        }
        assertThat(pass).isEqualTo(new ResumeSummary(4, 4, 4, 0, 0, 0, 0, 0, 0, 0));
        assertThat(maxInFlight.get()).as("instances in their step at once").isEqualTo(2);
        for (int i = 1; i <= 4; i++) {
            assertThat(info("paced", "p" + i).status()).as("p" + i).isEqualTo(WorkflowStatus.COMPLETED);
            assertThat(stepRuns.get("p" + i).get()).as("step runs of p" + i).isEqualTo(1);
        }
    }

    @Test
    void a_full_batch_is_followed_by_the_next_pass_at_once_not_after_the_poll_interval() {
        for (int i = 1; i <= 7; i++) {
            engine.start("quick", "b" + i, "b" + i, String.class);
        }
        List<Long> discoveredPerPass = new CopyOnWriteArrayList<>();
        ResumeListener listener = new ResumeListener() {
            @Override
            public void onPass(ResumeSummary summary, Duration elapsed, long pendingAwakeables, long backlog) {
                discoveredPerPass.add((long) summary.discovered());
            }
        };
        // no push and an hour between passes: only the full-batch rule can start passes 2 to 4
        ResumeOptions options = ResumeOptions.builder().batchLimit(2).push(false)
                .pollInterval(Duration.ofHours(1)).leaseTtl(Duration.ofSeconds(30)).listener(listener).build();
        long t0 = System.nanoTime();
        try (ResumeWorker worker = engine.resumeWorker(options).start()) {
            await("all 7 completed (the poll interval is an hour)").atMost(WAIT).until(() -> completed("quick") == 7);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            // the passes that ran the 7 have reported (a pass reports after its last completion)
            await("passes reported").atMost(WAIT)
                    .until(() -> discoveredPerPass.stream().mapToLong(Long::longValue).sum() >= 7);
            assertThat(worker.options().batchLimit()).isEqualTo(2);
        }
        // oldest first, two per pass; the short pass ends the burst (the loop then waits its hour)
        // (a last report may carry only attempts that ended after the last pass: it claimed nothing)
        assertThat(discoveredPerPass).filteredOn(n -> n > 0).containsExactly(2L, 2L, 2L, 1L);
        for (int i = 1; i <= 7; i++) {
            assertThat(stepRuns.get("b" + i).get()).as("step runs of b" + i).isEqualTo(1);
        }
    }

    private static WorkflowInfo info(String id) {
        return info("alwaysCrashes", id);
    }

    private static WorkflowInfo info(String name, String id) {
        return engine.handle(name, id, String.class).info();
    }

    private static long completed(String name) {
        return query("SELECT count(*) FROM " + q() + ".workflows WHERE name = ? AND status = 'completed'", name);
    }

    /** What the last crash wrote: {@code next_attempt_at - updated_at}, in microseconds (exact). */
    private static long backoffMicros(String id) {
        return query("SELECT (EXTRACT(EPOCH FROM (next_attempt_at - updated_at)) * 1000000)::bigint FROM " + q()
                + ".workflows WHERE name = 'alwaysCrashes' AND id = ?", id);
    }

    private static void makeDue(String id) {
        POSTGRES.execute("UPDATE " + q() + ".workflows SET next_attempt_at = now() WHERE name = 'alwaysCrashes'"
                + " AND id = '" + id + "'");
    }

    private static long query(String sql, String param) {
        try (Connection c = POSTGRES.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, param);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("a row for " + param).isTrue();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String q() {
        return "\"" + store.schema() + "\"";
    }
}
