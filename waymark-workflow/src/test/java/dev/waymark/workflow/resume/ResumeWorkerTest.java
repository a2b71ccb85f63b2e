package dev.waymark.workflow.resume;

import dev.waymark.core.RetryPolicy;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowHandle;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.status.WorkflowStatus;
import dev.waymark.workflow.micrometer.WorkflowMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The resume pass, counter by counter, on crafted instances; options; the push and fixed loops. */
class ResumeWorkerTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private static final Map<String, UUID> awakeables = new ConcurrentHashMap<>();

    private static final java.util.concurrent.CountDownLatch longStarted = new java.util.concurrent.CountDownLatch(1);
    private static EventStore store;
    private static WorkflowEngine engine;
    private static WorkflowClient client;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("quick", String.class, String.class, (ctx, in) -> {
                    runs.computeIfAbsent(ctx.workflowId(), k -> new AtomicInteger()).incrementAndGet();
                    return ctx.step("only", String.class, () -> "ok " + in);
                })
                .register("waits", String.class, String.class, (ctx, in) -> {
                    var a = ctx.awakeable("go", String.class);
                    ctx.step("publish", () -> {
                        awakeables.put(ctx.workflowId(), a.id());
                        return null;
                    });
                    return a.await();
                })
                .register("boom", String.class, String.class, (ctx, in) -> {
                    throw new IllegalStateException("boom " + ctx.workflowId());
                })
                .register("long", String.class, String.class, (ctx, in) -> ctx.step("wait", String.class, () -> {
                    longStarted.countDown();
                    new java.util.concurrent.CountDownLatch(1).await(); // until interrupted by the shutdown
                    return "never";
                }))
                // cancelled (by its own step, as a client elsewhere could) while a worker runs it
                .register("cancelledMidRun", String.class, String.class, (ctx, in) -> {
                    ctx.step("cancel", () -> {
                        engine.cancel("cancelledMidRun", ctx.workflowId());
                        return null;
                    });
                    return ctx.step("after", String.class, () -> "never");
                })
                // marked failed elsewhere while a worker runs it (crafted: as another worker's last crash would)
                .register("failedMidRun", String.class, String.class, (ctx, in) -> {
                    ctx.step("fail", () -> {
                        sql("UPDATE waymark.workflows SET status = 'failed', failure = 'marked elsewhere',"
                                + " completed_at = now() WHERE name = 'failedMidRun' AND id = '" + ctx.workflowId()
                                + "'");
                        return null;
                    });
                    return "never";
                })
                .register(new WorkflowRegistry.Definition<>("brokenFactory", String.class, String.class, () -> {
                    throw new IllegalStateException("cannot build the workflow");
                }));
        // start() leaves the run to resume workers, so each pass sees crafted instances as they are
        engine = WorkflowEngine.builder(store, registry).runOnStart(false).build();
        client = WorkflowClient.create(store);
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    @BeforeEach
    void clean() throws Exception {
        sql("DELETE FROM waymark.workflows");
        sql("DELETE FROM waymark.workflow_awakeables");
    }

    private static void sql(String statement) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }

    private static ResumeOptions options() {
        return ResumeOptions.builder().concurrency(1)
                .retry(RetryPolicy.exponential(2, Duration.ofMillis(1), Duration.ofMillis(1)))
                .leaseTtl(Duration.ofSeconds(5)).build();
    }

    private static WorkflowInfo info(String name, String id) {
        return engine.handle(name, id, String.class).info();
    }

    @Test
    void counts_completed_suspended_and_unknown() {
        engine.start("quick", "q1", "a", String.class);
        engine.start("waits", "w1", "b", String.class);
        client.start("ghost", "g1", "c", String.class); // a client does not know the registry
        try (ResumeWorker worker = engine.resumeWorker(options())) {
            ResumeSummary s = worker.resumeOnce();
            assertThat(s).isEqualTo(new ResumeSummary(2, 2, 1, 1, 1, 0, 0, 0, 0, 0));
            // parked and unknown instances: the parked one is hidden, the unknown one stays untouched
            ResumeSummary again = worker.resumeOnce();
            assertThat(again).isEqualTo(new ResumeSummary(0, 0, 0, 0, 1, 0, 0, 0, 0, 0));
        }
        assertThat(info("ghost", "g1").status()).isEqualTo(WorkflowStatus.RUNNING);
        assertThat(info("ghost", "g1").attempts()).isZero();
        assertThat(info("ghost", "g1").leaseOwner()).isNull();
        assertThat(info("waits", "w1").status()).isEqualTo(WorkflowStatus.SUSPENDED);
    }

    @Test
    void unknown_names_never_crowd_registered_workflows_out_of_the_batch() {
        for (int i = 0; i < 5; i++) {
            client.start("ghost", "crowd-" + i, "c", String.class); // older than the one below
        }
        engine.start("quick", "late", "x", String.class);
        try (ResumeWorker worker = engine.resumeWorker(options().toBuilder().batchLimit(2).build())) {
            ResumeSummary s = worker.resumeOnce();
            assertThat(s.completed()).isEqualTo(1);
            assertThat(s.unknownName()).isEqualTo(2);
        }
    }

    @Test
    void a_crash_below_the_budget_is_paced_and_the_last_one_fails_the_workflow() {
        engine.start("boom", "b1", "x", String.class);
        try (ResumeWorker worker = engine.resumeWorker(options())) {
            assertThat(worker.resumeOnce()).isEqualTo(new ResumeSummary(1, 1, 0, 0, 0, 0, 0, 1, 0, 0));
            WorkflowInfo once = info("boom", "b1");
            assertThat(once.status()).isEqualTo(WorkflowStatus.RUNNING);
            assertThat(once.attempts()).isEqualTo(1);
            assertThat(once.lastError()).contains("boom b1");
            assertThat(once.nextAttemptAt()).isNotNull();
            await().atMost(WAIT).until(() -> worker.resumeOnce().failed() == 1);
        }
        WorkflowInfo failed = info("boom", "b1");
        assertThat(failed.status()).isEqualTo(WorkflowStatus.FAILED);
        assertThat(failed.failure()).isEqualTo("crashed 2 times; last error: java.lang.IllegalStateException: boom b1");
    }

    @Test
    void a_crash_is_logged_once_whether_the_workers_listener_logs_it_or_not() {
        engine.start("boom", "logged-once", "x", String.class);
        engine.start("boom", "quiet-listener", "x", String.class);
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        java.io.PrintStream original = System.err; // slf4j-simple writes to the System.err of the moment
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            try (ResumeWorker worker = engine.resumeWorker(options().toBuilder().batchLimit(1)
                    .retry(RetryPolicy.exponential(2, Duration.ofHours(1), Duration.ofHours(1))).build())) { // LOGGING; not due again soon
                assertThat(worker.resumeOnce().crashed()).isEqualTo(1);
            }
            try (ResumeWorker worker = engine
                    .resumeWorker(options().toBuilder().listener(new ResumeListener() {}).build())) {
                assertThat(worker.resumeOnce().crashed()).isEqualTo(1); // the other one is in its backoff
            }
        } finally {
            System.setErr(original);
        }
        List<String> lines = captured.toString(java.nio.charset.StandardCharsets.UTF_8).lines().toList();
        // before: the default listener and the engine's advancer each logged it; a listener that logs
        // nothing must not silence it either
        for (String id : List.of("logged-once", "quiet-listener")) {
            assertThat(lines).as(id).filteredOn(l -> l.contains("boom/" + id) && l.contains("crashed on attempt 1/2"))
                    .hasSize(1);
        }
    }

    @Test
    void a_run_that_finds_its_workflow_cancelled_or_failed_is_resumed_but_not_counted_as_failed_by_this_pass() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RecordingResumeListener recorder = new RecordingResumeListener();
        engine.start("cancelledMidRun", "cm-1", "x", String.class);
        engine.start("failedMidRun", "fm-1", "x", String.class);
        try (ResumeWorker worker = engine
                .resumeWorker(options().toBuilder().listener(new WorkflowMetrics(registry, recorder)).build())) {
            // before: the run that found fm-1 failed counted failed + 1, so every worker that ran into
            // a failure some other worker had marked (and counted) counted it again
            assertThat(worker.resumeOnce()).isEqualTo(new ResumeSummary(2, 2, 0, 0, 0, 0, 1, 0, 0, 0));
        }
        assertThat(info("cancelledMidRun", "cm-1").status()).isEqualTo(WorkflowStatus.CANCELLED);
        assertThat(info("failedMidRun", "fm-1").status()).isEqualTo(WorkflowStatus.FAILED);
        assertThat(info("failedMidRun", "fm-1").failure()).isEqualTo("marked elsewhere");
        assertThat(registry.get("waymark.workflow.resume.resumed").counter().count()).isEqualTo(2);
        assertThat(registry.get("waymark.workflow.resume.failed").counter().count()).isZero();
        assertThat(recorder.events).as("no crash, no failure marked").isEmpty();
    }

    @Test
    void a_live_foreign_lease_skips_only_that_instance_and_an_expired_one_is_taken_over() throws Exception {
        engine.start("quick", "held", "x", String.class);
        engine.start("quick", "free", "x", String.class);
        engine.start("quick", "orphan", "x", String.class);
        sql("UPDATE waymark.workflows SET lease_owner = 'someone-else', lease_epoch = 3,"
                + " lease_expires_at = now() + interval '1 hour' WHERE id = 'held'");
        sql("UPDATE waymark.workflows SET lease_owner = 'dead-worker', lease_epoch = 7,"
                + " lease_expires_at = now() - interval '2 seconds' WHERE id = 'orphan'");
        List<Duration> recovered = new CopyOnWriteArrayList<>();
        ResumeListener listener = new ResumeListener() {
            @Override
            public void onRecovered(String name, String id, Duration sinceExpiry) {
                recovered.add(sinceExpiry);
            }
        };
        try (ResumeWorker worker = engine.resumeWorker(options().toBuilder().listener(listener).build())) {
            // the live lease is not even claimed (the claim skips it in the same statement): nothing to skip
            assertThat(worker.resumeOnce()).isEqualTo(new ResumeSummary(2, 2, 2, 0, 0, 0, 0, 0, 0, 0));
        }
        assertThat(runs.get("held")).isNull();
        assertThat(info("quick", "held").leaseOwner()).isEqualTo("someone-else");
        assertThat(info("quick", "orphan").status()).isEqualTo(WorkflowStatus.COMPLETED);
        assertThat(info("quick", "orphan").leaseEpoch()).isGreaterThan(7); // a fresh epoch, above the dead one's
        assertThat(recovered).singleElement()
                .satisfies(d -> assertThat(d).isGreaterThanOrEqualTo(Duration.ofSeconds(1)));
    }

    @Test
    void a_definition_that_cannot_be_built_fails_that_workflow_not_the_pass() {
        engine.start("brokenFactory", "bf", "x", String.class);
        engine.start("quick", "fine", "x", String.class);
        try (ResumeWorker worker = engine.resumeWorker(options())) {
            ResumeSummary s = worker.resumeOnce();
            assertThat(s.completed()).isEqualTo(1);
            assertThat(s.crashed()).isEqualTo(1);
        }
        assertThat(info("brokenFactory", "bf").lastError()).contains("cannot build the workflow");
    }

    @Test
    void metrics_count_passes_and_sample_the_gauges() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WorkflowMetrics metrics = new WorkflowMetrics(registry);
        engine.start("quick", "m1", "x", String.class);
        engine.start("waits", "m2", "x", String.class);
        try (ResumeWorker worker = engine.resumeWorker(options().toBuilder().listener(metrics).build())) {
            worker.resumeOnce();
            worker.resumeOnce(); // samples the awakeable the first pass created
        }
        assertThat(registry.get("waymark.workflow.resume.resumed").counter().count()).isEqualTo(2);
        assertThat(registry.get("waymark.workflow.resume.completed").counter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.workflow.awakeables.pending").gauge().value()).isEqualTo(1);
        assertThat(registry.get("waymark.workflow.resume.pass").timer().count()).isEqualTo(2);
    }

    @Test
    void every_pass_counter_and_crash_event_matches_what_the_passes_did() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RecordingResumeListener recorder = new RecordingResumeListener();
        WorkflowMetrics metrics = new WorkflowMetrics(registry, recorder);
        List<ResumeEvent> events = recorder.events;
        engine.start("quick", "done", "x", String.class);
        engine.start("boom", "crashing", "x", String.class);
        for (int i = 0; i < 3; i++) {
            client.start("ghost", "ghost-" + i, "x", String.class);
        }
        for (int i = 0; i < 2; i++) {
            engine.start("quick", "held-" + i, "x", String.class);
        }
        sql("UPDATE waymark.workflows SET lease_owner = 'someone-else', lease_epoch = 3,"
                + " lease_expires_at = now() + interval '1 hour' WHERE id LIKE 'held-%'");
        List<ResumeSummary> passes = new CopyOnWriteArrayList<>();
        try (ResumeWorker worker = engine.resumeWorker(options().toBuilder().listener(metrics).build())) {
            // maxAttempts 2: the first pass crashes "crashing" once, a later one (after the backoff) fails it
            await().atMost(WAIT).until(() -> {
                passes.add(worker.resumeOnce());
                return info("boom", "crashing").status() == WorkflowStatus.FAILED;
            });
        }
        ResumeSummary total = passes.stream().reduce(ResumeSummary.EMPTY, ResumeSummary::plus);
        int n = passes.size();
        // the two held instances are never claimed, so never skipped
        assertThat(total).isEqualTo(new ResumeSummary(total.discovered(), 3, 1, 0, 3 * n, 1, 0, 2, 0, 0));
        assertThat(registry.get("waymark.workflow.resume.resumed").counter().count()).isEqualTo(3);
        assertThat(registry.get("waymark.workflow.resume.completed").counter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.workflow.resume.crashed").counter().count()).isEqualTo(2);
        assertThat(registry.get("waymark.workflow.resume.failed").counter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.workflow.resume.unknown_name").counter().count()).isEqualTo(3 * n);
        assertThat(registry.get("waymark.workflow.resume.lease_skipped").counter().count()).isZero();
        assertThat(registry.get("waymark.workflow.resume.errors").counter().count()).isZero();
        assertThat(registry.get("waymark.workflow.resume.pass").timer().count()).isEqualTo(n);
        // every crash is reported as one, the last included, and then the failure it caused
        assertThat(events).filteredOn(e -> !(e instanceof ResumeEvent.UnknownName))
                .extracting(e -> e.getClass().getSimpleName())
                .containsExactly("Crashed", "Crashed", "MarkedFailed");
        assertThat(events).filteredOn(e -> e instanceof ResumeEvent.Crashed)
                .extracting(e -> ((ResumeEvent.Crashed) e).attempt()).containsExactly(1, 2);
        assertThat(events).filteredOn(e -> e instanceof ResumeEvent.UnknownName).hasSize(3 * n);
    }

    @Test
    void closing_the_worker_abandons_the_attempt_cleanly_and_releases_its_lease() throws Exception {
        engine.start("long", "l1", "x", String.class);
        ResumeWorker worker = engine.resumeWorker(options().toBuilder().concurrency(2).build()).start();
        assertThat(longStarted.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(info("long", "l1").leaseOwner()).isEqualTo(worker.owner());
        worker.close();
        WorkflowInfo after = info("long", "l1");
        assertThat(after.leaseOwner()).isNull();
        assertThat(after.attempts()).isZero();
        assertThat(after.lastError()).isNull();
        assertThat(after.status()).isEqualTo(WorkflowStatus.RUNNING);
    }

    @Test
    void closing_a_serial_worker_claims_nothing_after_the_attempt_it_interrupted() throws Exception {
        java.util.concurrent.CountDownLatch blocked = new java.util.concurrent.CountDownLatch(1);
        WorkflowRegistry own = new WorkflowRegistry()
                .register("serialLong", String.class, String.class, (ctx, in) -> ctx.step("wait", String.class, () -> {
                    blocked.countDown();
                    new java.util.concurrent.CountDownLatch(1).await(); // until interrupted by the close
                    return "never";
                }))
                .register("serialQuick", String.class, String.class, (ctx, in) -> {
                    runs.computeIfAbsent(ctx.workflowId(), k -> new AtomicInteger()).incrementAndGet();
                    return ctx.step("only", String.class, () -> "ok");
                });
        try (WorkflowEngine serial = WorkflowEngine.builder(store, own).runOnStart(false).build()) {
            serial.start("serialLong", "sl-1", "x", String.class); // the oldest: first in the pass
            for (int i = 1; i <= 3; i++) {
                serial.start("serialQuick", "sq-" + i, "x", String.class);
            }
            ResumeWorker worker = serial.resumeWorker(options()).start(); // concurrency 1: one attempt at a time
            assertThat(blocked.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            worker.close();
            for (int i = 1; i <= 3; i++) {
                assertThat(runs.get("sq-" + i)).as("sq-" + i + " ran after close").isNull();
                assertThat(info("serialQuick", "sq-" + i).leaseOwner()).isNull();
            }
            assertThat(info("serialLong", "sl-1").leaseOwner()).isNull();
        }
    }

    @Test
    void a_resume_worker_is_made_by_its_engine_behind_an_interface() {
        // before: a public constructor took the engine's internal runtime, instance key and advance types;
        // then a factory registered by the class initializer and checked with StackWalker
        assertThat(ResumeWorker.class.isInterface()).isTrue();
        engine.start("quick", "made-by-engine", "x", String.class);
        try (ResumeWorker worker = engine.resumeWorker(options())) {
            assertThat(worker.getClass().getPackageName()).isEqualTo("dev.waymark.workflow.resume.internal");
            assertThat(worker.options()).isEqualTo(options()).hasSameHashCodeAs(options());
            assertThat(worker.resumeOnce().completed()).isEqualTo(1);
        }
    }

    @Test
    void two_workers_claim_disjoint_batches_and_never_skip_each_others_candidates() throws Exception {
        for (int i = 0; i < 40; i++) {
            engine.start("quick", "d" + i, "x", String.class);
        }
        java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
        ResumeOptions options = options().toBuilder().concurrency(4).batchLimit(40).build();
        try (ResumeWorker a = engine.resumeWorker(options); ResumeWorker b = engine.resumeWorker(options)) {
            java.util.concurrent.CompletableFuture<ResumeSummary> first = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> passTogether(a, together));
            ResumeSummary second = passTogether(b, together);
            ResumeSummary sum = first.get(30, java.util.concurrent.TimeUnit.SECONDS).plus(second);
            assertThat(sum.discovered()).as("claimed by the two passes together").isEqualTo(40);
            assertThat(sum.completed()).isEqualTo(40);
            assertThat(sum.leaseSkipped()).isZero();
        }
        for (int i = 0; i < 40; i++) {
            assertThat(runs.get("d" + i)).as("runs of d" + i).hasValue(1);
        }
    }

    private static ResumeSummary passTogether(ResumeWorker worker, java.util.concurrent.CyclicBarrier together) {
        try {
            together.await(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        return worker.resumeOnce();
    }

    @Test
    void an_idle_loop_pass_is_one_statement() throws Exception {
        AtomicInteger connections = new AtomicInteger();
        javax.sql.DataSource real = POSTGRES.dataSource();
        javax.sql.DataSource counting = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[]{javax.sql.DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        connections.incrementAndGet();
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        AtomicInteger passes = new AtomicInteger();
        ResumeListener counter = new ResumeListener() {
            @Override
            public void onPass(ResumeSummary summary, Duration elapsed, long pendingAwakeables, long backlog) {
                passes.incrementAndGet();
            }
        };
        try (EventStore quiet = EventStore.builder(counting).notifications(false).build();
                WorkflowEngine idle = WorkflowEngine.builder(quiet, new WorkflowRegistry()
                        .register("quick", String.class, String.class, (ctx, in) -> in)).runOnStart(false).build();
                ResumeWorker worker = idle.resumeWorker(ResumeOptions.builder().push(false)
                        .pollInterval(Duration.ofMillis(20)).listener(counter).build()).start()) {
            await("the first passes (cascade repair, unknown names) are done").atMost(WAIT)
                    .until(() -> passes.get() >= 3);
            int passesBefore = passes.get();
            int connectionsBefore = connections.get();
            await("20 idle passes").atMost(WAIT).until(() -> passes.get() >= passesBefore + 20);
            int p = passes.get() - passesBefore;
            int c = connections.get() - connectionsBefore;
            // one statement (one pooled connection) per pass; a pass in progress at either reading is off by one
            assertThat(c).as("connections taken by %d idle passes", p).isBetween(p - 1, p + 1);
        }
    }

    @Test
    void the_defaults_are_the_seeds_but_the_lease_and_the_documented_ones() {
        ResumeOptions d = ResumeOptions.defaults();
        // seed 002: a 1-second poll, 5 attempts; the lease is the engine's 30 s (the seed's 60 s made a
        // crash recovered twice as late when a resume worker had run the instance)
        assertThat(d.pollInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(d.retry().maxAttempts()).isEqualTo(5);
        assertThat(d.leaseTtl()).isEqualTo(Duration.ofSeconds(30));
        // the rest as ResumeOptions documents them
        assertThat(d.batchLimit()).isEqualTo(100);
        assertThat(d.concurrency()).isEqualTo(ResumeOptions.DEFAULT_CONCURRENCY).isEqualTo(64);
        assertThat(d.retry().initialDelay()).isEqualTo(Duration.ofSeconds(2));
        assertThat(d.retry().multiplier()).isEqualTo(2.0);
        assertThat(d.retry().maxDelay()).isEqualTo(Duration.ofSeconds(64));
        assertThat(d.retry()).isEqualTo(ResumeOptions.DEFAULT_RETRY)
                .isEqualTo(dev.waymark.workflow.WorkflowEngine.DEFAULT_RETRY);
        assertThat(d.push()).isTrue();
        assertThat(d.cascadeRepairInterval()).isEqualTo(Duration.ofSeconds(60));
        assertThat(d.listener()).isSameAs(ResumeListener.LOGGING);
    }

    @Test
    void invalid_options_are_refused_with_the_field_named() {
        assertThatThrownBy(() -> ResumeOptions.builder().concurrency(0).build())
                .isInstanceOf(WorkflowConfigException.class).hasMessage("concurrency must be in [1, 1024], got 0");
        assertThatThrownBy(() -> ResumeOptions.builder().retry(null).build())
                .isInstanceOf(WorkflowConfigException.class).hasMessageContaining("retry");
        assertThatThrownBy(() -> ResumeOptions.builder().leaseTtl(Duration.ZERO).build())
                .hasMessage("leaseTtl must be > 0, got PT0S");
        assertThatThrownBy(() -> ResumeOptions.builder().pollInterval(Duration.ofSeconds(-1)).build())
                .hasMessage("pollInterval must be > 0, got PT-1S");
        assertThatThrownBy(() -> ResumeOptions.builder().batchLimit(0).build())
                .hasMessage("batchLimit must be in [1, 10000], got 0");
        assertThatThrownBy(() -> ResumeOptions.builder().retry(ResumeOptions.DEFAULT_RETRY.withJitter(0.5)).build())
                .isInstanceOf(WorkflowConfigException.class)
                .hasMessageStartingWith("retry must double without jitter");
        assertThatThrownBy(() -> ResumeOptions.builder().retry(ResumeOptions.DEFAULT_RETRY.withMultiplier(3)).build())
                .hasMessageStartingWith("retry must double without jitter");
        assertThatThrownBy(() -> ResumeOptions.builder().cascadeRepairInterval(Duration.ZERO).build())
                .hasMessage("cascadeRepairInterval must be > 0, got PT0S");
        assertThat(ResumeOptions.builder().pollInterval(Duration.ofMillis(10)).build().cascadeRepairInterval())
                .as("independent of the poll interval").isEqualTo(Duration.ofSeconds(60));
        ResumeWorker closed = engine.resumeWorker(options());
        assertThat(closed.start()).isSameAs(closed);
        assertThat(closed.start()).as("a second start starts nothing more").isSameAs(closed);
        assertThatThrownBy(() -> closed.stop(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("resume worker stop timeout must be >= 0, got PT-0.001S");
        assertThatThrownBy(() -> closed.stop(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("resume worker stop timeout must be >= 0, got null");
        closed.close();
        // before: it started a loop that never ran a pass
        assertThatThrownBy(closed::start).isInstanceOf(IllegalStateException.class).hasMessageEndingWith("is closed");
    }

    @Test
    void the_push_loop_resumes_within_milliseconds_and_the_fixed_loop_within_the_poll_interval() throws Exception {
        Duration poll = Duration.ofMillis(1000);
        List<Long> push = measureWake(options().toBuilder().push(true).pollInterval(poll).build(), "push");
        List<Long> fixed = measureWake(options().toBuilder().push(false).pollInterval(poll).build(), "fixed");
        long pushMedian = push.stream().sorted().toList().get(push.size() / 2);
        long fixedMedian = fixed.stream().sorted().toList().get(fixed.size() / 2);
        System.out.println("awakeable completion to workflow completion (ms): push " + push + " median " + pushMedian
                + "; fixed poll " + poll.toMillis() + " ms " + fixed + " median " + fixedMedian);
        assertThat(pushMedian).isLessThan(250);
        assertThat(fixedMedian).isGreaterThan(pushMedian);
        assertThat(fixed).allSatisfy(ms -> assertThat(ms).isLessThan(poll.toMillis() + 1000));
    }

    /** Completes an awakeable through another store handle (so the wake travels by NOTIFY) and times the resume. */
    private List<Long> measureWake(ResumeOptions options, String label) throws Exception {
        List<Long> out = new ArrayList<>();
        try (EventStore other = EventStore.builder(POSTGRES.dataSource()).build();
                ResumeWorker worker = engine.resumeWorker(options).start()) {
            WorkflowClient remote = WorkflowClient.create(other);
            for (int i = 0; i < 5; i++) {
                String id = label + "-" + i;
                WorkflowHandle<String> h = engine.start("waits", id, "x", String.class);
                await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
                long t0 = System.nanoTime();
                remote.completeAwakeable(awakeables.get(id), "go");
                assertThat(h.await(WAIT)).isEqualTo("go");
                out.add((System.nanoTime() - t0) / 1_000_000);
            }
        }
        return out;
    }
}
