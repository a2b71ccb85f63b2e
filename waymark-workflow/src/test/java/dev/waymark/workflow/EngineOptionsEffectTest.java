package dev.waymark.workflow;

import dev.waymark.core.RetryPolicy;
import dev.waymark.workflow.awakeable.AwakeableFailedException;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.UnknownWorkflowException;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.status.JournalEntry;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowStatus;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The documented effect of options of {@link WorkflowEngineBuilder} ({@code shutdownTimeout},
 * {@code retry}) and of {@link WorkflowCollector#start}'s retention and
 * batch size, observed on real instances.
 */
class EngineOptionsEffectTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();

    /** Counted down when the "gated" step is entered; set per test. */
    private static volatile CountDownLatch entered = new CountDownLatch(1);
    /** What the "gated" step waits for; set per test. */
    private static volatile CountDownLatch gate = new CountDownLatch(1);

    private static EventStore store;
    private static WorkflowRegistry registry;
    private static WorkflowClient client;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        registry = new WorkflowRegistry()
                .register("gated", String.class, String.class, (ctx, in) -> {
                    String r = ctx.step("work", String.class, () -> {
                        entered.countDown();
                        gate.await(); // only the test's release, or an interrupt, ends it
                        effects.hit(ctx.workflowId() + ":work");
                        return "done " + in;
                    });
                    return r;
                })
                .register("alwaysCrashes", String.class, String.class, (ctx, in) -> {
                    effects.hit(ctx.workflowId() + ":body");
                    throw new IllegalStateException("always " + ctx.workflowId());
                })
                .register("plain", String.class, String.class, (ctx, in) -> ctx.step("echo", String.class, () -> in))
                .register("waits", String.class, String.class, (ctx, in) -> {
                    try {
                        return ctx.awakeable("go", String.class).await();
                    } catch (AwakeableFailedException e) {
                        return "failed: " + e.reason();
                    }
                });
        client = WorkflowClient.create(store);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @BeforeEach
    void clean() {
        POSTGRES.execute("DELETE FROM " + q() + ".workflows");
        POSTGRES.execute("DELETE FROM " + q() + ".workflow_awakeables");
        entered = new CountDownLatch(1);
        gate = new CountDownLatch(1);
    }

    @Test
    void a_null_argument_is_refused_with_its_name_like_any_other_bad_argument() {
        // before: bare NullPointerExceptions, where a bad value of a sibling option is an
        // InvalidWorkflowInputException naming it; a builder's or options' null is a WorkflowConfigException
        assertNullOptionRefused(() -> WorkflowEngine.builder(null, registry), "store");
        assertNullOptionRefused(() -> WorkflowEngine.builder(store, null), "registry");
        assertNullOptionRefused(() -> WorkflowEngine.builder(store, registry).codec(null), "codec");
        assertNullOptionRefused(() -> WorkflowEngine.builder(store, registry).listener(null), "listener");
        assertNullOptionRefused(() -> ResumeOptions.builder().listener(null).build(), "listener");
        assertNullRefused(() -> WorkflowClient.create(store, null), "codec");
        assertNullRefused(() -> WorkflowCodec.jackson(null), "mapper");
        assertNullRefused(() -> client.handle("plain", "p", null), "resultType");
        assertNullRefused(() -> client.completeAwakeable(null, "x"), "awakeable");
        assertNullRefused(() -> new WorkflowRegistry().register("plain", String.class, null, (ctx, in) -> in),
                "resultType");
        assertNullRefused(() -> client.start("plain", "null-result-type", "x", null), "resultType");
        assertThat(client.describe("plain", "null-result-type")).as("nothing written").isEmpty();
        assertNullRefused(() -> client.handle("plain", "p", String.class).awaitOutcome(null), "timeout");
        assertNullRefused(() -> client.handle("plain", "p", String.class).await(null), "timeout");
        assertThatThrownBy(() -> client.describe(null, "p")).isInstanceOf(InvalidWorkflowInputException.class);
        assertThatThrownBy(() -> client.describe("plain", null)).isInstanceOf(InvalidWorkflowInputException.class);
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).runOnStart(false).build()) {
            assertNullRefused(() -> engine.resumeWorker(null), "options");
        }
    }

    private static void assertNullOptionRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call,
            String what) {
        assertThatThrownBy(call).as(what).isInstanceOf(WorkflowConfigException.class)
                .hasMessage(what + " must not be null");
    }

    private static void assertNullRefused(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String what) {
        assertThatThrownBy(call).as(what).isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessage(what + " must not be null");
    }

    @Test
    void close_lets_a_running_step_finish_within_the_shutdown_timeout() throws Exception {
        WorkflowEngine engine = WorkflowEngine.builder(store, registry).shutdownTimeout(Duration.ofSeconds(30)).build();
        Thread closer = null;
        try {
            engine.start("gated", "g1", "x", String.class);
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("step entered").isTrue();

            AtomicLong closeNanos = new AtomicLong(-1);
            closer = Thread.ofPlatform().name("engine-closer").start(() -> {
                long t0 = System.nanoTime();
                engine.close();
                closeNanos.set(System.nanoTime() - t0);
            });
            // close() is waiting for the run (or, broken, has already returned)
            Thread closing = closer;
            await().atMost(WAIT).until(() -> closing.getState() == Thread.State.TIMED_WAITING || !closing.isAlive());
            // the run goes on 300 ms longer after close() began, and close() keeps waiting for it all along
            await("close() still waiting for the run 300 ms after it began").during(Duration.ofMillis(300))
                    .atMost(WAIT).until(closing::isAlive);
            assertThat(closer.isAlive()).as("close() still waiting for the run 300 ms after it began").isTrue();
            gate.countDown();
            closer.join(WAIT.toMillis());
            assertThat(closer.isAlive()).as("close() returned once the run ended").isFalse();
            long closeMs = closeNanos.get() / 1_000_000;
            assertThat(closeMs).isGreaterThanOrEqualTo(300);
        } finally {
            gate.countDown();
            if (closer == null) {
                engine.close();
            }
        }
        WorkflowInfo info = client.handle("gated", "g1", String.class).info();
        assertThat(info.status()).isEqualTo(WorkflowStatus.COMPLETED);
        assertThat(info.leaseOwner()).isNull();
        assertThat(client.handle("gated", "g1", String.class).await(WAIT)).isEqualTo("done x");
        assertThat(effects.count("g1:work")).isEqualTo(1);
        assertThat(journaledSteps("gated", "g1")).containsExactly("work");
    }

    @Test
    void close_lets_its_resume_workers_attempts_finish_too() throws Exception {
        WorkflowEngine engine = WorkflowEngine.builder(store, registry).runOnStart(false)
                .shutdownTimeout(Duration.ofSeconds(30)).build();
        Thread closer = null;
        try {
            engine.start("gated", "r1", "x", String.class);
            engine.resumeWorker(ResumeOptions.builder().concurrency(1).pollInterval(Duration.ofMillis(50)).build())
                    .start();
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the worker's attempt is in its step")
                    .isTrue();
            closer = Thread.ofPlatform().name("engine-closer").start(engine::close);
            Thread closing = closer;
            // before the fix, close() interrupted the worker's attempt at once: the step never finished
            await().atMost(WAIT).until(() -> closing.getState() == Thread.State.WAITING
                    || closing.getState() == Thread.State.TIMED_WAITING || !closing.isAlive());
            gate.countDown();
            closer.join(WAIT.toMillis());
            assertThat(closer.isAlive()).as("close() returned once the attempt ended").isFalse();
        } finally {
            gate.countDown();
            if (closer == null) {
                engine.close();
            }
        }
        assertThat(client.handle("gated", "r1", String.class).info().status()).isEqualTo(WorkflowStatus.COMPLETED);
        assertThat(effects.count("r1:work")).isEqualTo(1);
    }

    @Test
    void a_worker_closing_with_a_grace_finishes_its_attempt_and_claims_nothing_more() throws Exception {
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).runOnStart(false).build()) {
            engine.start("gated", "r2", "x", String.class);
            ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().concurrency(1)
                    .pollInterval(Duration.ofMillis(50)).build()).start();
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the attempt is in its step").isTrue();
            engine.start("plain", "later", "y", String.class); // runnable, after the pass's discovery
            AtomicBoolean stopped = new AtomicBoolean();
            Thread closer = Thread.ofPlatform().name("worker-closer").start(() -> stopped.set(worker.stop(WAIT)));
            // TIMED_WAITING: the closer waits for the attempt, so it has already stopped all claiming
            await().atMost(WAIT).until(() -> closer.getState() == Thread.State.TIMED_WAITING || !closer.isAlive());
            gate.countDown();
            closer.join(WAIT.toMillis());
            assertThat(closer.isAlive()).as("stop(timeout) returned once the attempt ended").isFalse();
            assertThat(stopped).as("stop(timeout) answers that the worker stopped in time").isTrue();
        } finally {
            gate.countDown();
        }
        assertThat(client.handle("gated", "r2", String.class).info().status()).isEqualTo(WorkflowStatus.COMPLETED);
        assertThat(effects.count("r2:work")).isEqualTo(1);
        WorkflowInfo later = client.handle("plain", "later", String.class).info();
        assertThat(later.status()).as("a closing worker claims nothing more").isEqualTo(WorkflowStatus.RUNNING);
        assertThat(later.leaseOwner()).isNull();
        assertThat(journaledSteps("plain", "later")).isEmpty();
    }

    @Test
    void a_custom_payload_limit_applies_to_inputs_and_step_results_and_the_owner_names_the_lease()
            throws Exception {
        WorkflowRegistry bulky = new WorkflowRegistry()
                .register("echoes", String.class, String.class, (ctx, in) -> ctx.step("echo", String.class, () -> in))
                .register("bloats", String.class, String.class, (ctx, in) -> ctx.step("bloat", String.class,
                        () -> "x".repeat(300)))
                .register("gated", String.class, String.class, (ctx, in) -> ctx.step("work", String.class, () -> {
                    entered.countDown();
                    gate.await();
                    return in;
                }));
        try (WorkflowEngine engine = WorkflowEngine.builder(store, bulky).maxPayloadBytes(128)
                .retry(WorkflowEngine.DEFAULT_RETRY.withMaxAttempts(1))
                .owner("api-1").build()) {
            String fits = "y".repeat(100);
            assertThat(engine.start("echoes", "fits", fits, String.class).await(WAIT)).isEqualTo(fits);
            assertThatThrownBy(() -> engine.start("echoes", "too-big", "y".repeat(200), String.class))
                    .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("the limit is 128");
            assertThat(client.describe("echoes", "too-big")).as("nothing written").isEmpty();

            engine.start("bloats", "b1", "x", String.class);
            await().atMost(WAIT)
                    .until(() -> client.handle("bloats", "b1", String.class).status() == WorkflowStatus.FAILED);
            assertThat(client.handle("bloats", "b1", String.class).info().failure())
                    .contains("result of step 'bloat'").contains("the limit is 128");
            assertThat(journaledSteps("bloats", "b1")).as("the oversized result is not journaled").isEmpty();

            engine.start("gated", "owned", "x", String.class);
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(client.handle("gated", "owned", String.class).info().leaseOwner()).isEqualTo("api-1");
            gate.countDown();
        } finally {
            gate.countDown();
        }
    }

    @Test
    void an_awakeable_failure_reason_over_the_payload_limit_is_refused_and_the_awakeable_stays_pending()
            throws Exception {
        // no held wait: the instance shows it is suspended, and nothing woke it
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).holdWaits(Duration.ZERO).build()) {
            WorkflowHandle<String> h = engine.start("waits", "w1", "x", String.class);
            UUID awakeable = await().atMost(WAIT).until(() -> client.describe("waits", "w1")
                    .flatMap(d -> d.awakeables().stream().findFirst()).map(AwakeableInfo::id).orElse(null),
                    java.util.Objects::nonNull);
            // before: written (2 MB in the awakeable's row), then journaled by the woken run
            assertThatThrownBy(() -> engine.failAwakeable(awakeable, "x".repeat(2_000_000)))
                    .isInstanceOf(InvalidWorkflowInputException.class)
                    .hasMessageContaining("failure reason of awakeable " + awakeable + " is 2000002 bytes of JSON")
                    .hasMessageContaining("the limit is 1048576");
            // a client's own limit, for the reason and for a value
            WorkflowClient small = WorkflowClient.create(store, WorkflowCodec.jackson(), 128);
            assertThatThrownBy(() -> small.failAwakeable(awakeable, "\"".repeat(64)))
                    .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("130 bytes of JSON")
                    .hasMessageContaining("the limit is 128");
            assertThatThrownBy(() -> small.completeAwakeable(awakeable, "y".repeat(200)))
                    .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("the limit is 128");
            assertThat(client.awakeable(awakeable).orElseThrow().status()).isEqualTo("pending");
            assertThat(h.status()).isEqualTo(WorkflowStatus.SUSPENDED);

            assertThat(engine.failAwakeable(awakeable, "n".repeat(100))).isEqualTo(AwakeableOutcome.SETTLED);
            assertThat(h.await(WAIT)).isEqualTo("failed: " + "n".repeat(100));
        }
        assertThatThrownBy(() -> WorkflowClient.create(store, WorkflowCodec.jackson(), 63))
                .isInstanceOf(WorkflowConfigException.class).hasMessage("maxPayloadBytes must be >= 64, got 63");
    }

    @Test
    void run_now_of_a_workflow_this_engine_does_not_register_is_refused_before_any_claim() {
        // started by a client: any engine may be the one registering it
        client.start("elsewhere", "e1", "x", String.class);
        Throwable refused;
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).build()) {
            refused = catchThrowable(() -> engine.runNow("elsewhere", "e1"));
        }
        // before: claimed, then the attempt found no body and was recorded as a crash (attempts 1,
        // with backoff and lastError), on its way to FAILED for want of a registration
        WorkflowInfo info = client.handle("elsewhere", "e1", String.class).info();
        assertThat(info.attempts()).isZero();
        assertThat(info.lastError()).isNull();
        assertThat(info.status()).isEqualTo(WorkflowStatus.RUNNING);
        assertThat(info.leaseOwner()).isNull();
        assertThat(refused).isInstanceOf(UnknownWorkflowException.class)
                .hasMessageContaining("workflow 'elsewhere' is not registered");
    }

    /** A step result whose field names the custom codec writes in snake case. */
    record Receipt(String orderId, int totalCents) {}

    @Test
    void a_custom_codec_writes_the_journal_and_reads_it_back() throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper snake = new com.fasterxml.jackson.databind.ObjectMapper()
                .setPropertyNamingStrategy(com.fasterxml.jackson.databind.PropertyNamingStrategies.SNAKE_CASE);
        WorkflowRegistry receipts = new WorkflowRegistry().register("receipts", String.class, Receipt.class,
                (ctx, in) -> ctx.step("charge", Receipt.class, () -> new Receipt(in, 1250)));
        try (WorkflowEngine engine = WorkflowEngine.builder(store, receipts).codec(WorkflowCodec.jackson(snake))
                .build()) {
            assertThat(engine.start("receipts", "rc1", "o-7", Receipt.class).await(WAIT))
                    .isEqualTo(new Receipt("o-7", 1250));
        }
        String journaled = client.describe("receipts", "rc1").orElseThrow().journal().stream()
                .filter(e -> "charge".equals(e.step())).findFirst().orElseThrow().data();
        assertThat(journaled).contains("\"order_id\"", "\"total_cents\"").doesNotContain("orderId");
    }

    @Test
    void close_interrupts_a_step_that_outlives_the_shutdown_timeout_and_records_nothing() throws Exception {
        WorkflowEngine engine = WorkflowEngine.builder(store, registry).shutdownTimeout(Duration.ofMillis(200))
                .leaseTtl(Duration.ofSeconds(60)).build();
        long closeMs = -1;
        try {
            engine.start("gated", "g2", "x", String.class);
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("step entered").isTrue();
            assertThat(client.handle("gated", "g2", String.class).info().leaseOwner()).isEqualTo(engine.owner());
            long t0 = System.nanoTime();
            engine.close();
            closeMs = (System.nanoTime() - t0) / 1_000_000;
        } finally {
            gate.countDown(); // never needed when the option works: the interrupt ended the step
            if (closeMs < 0) {
                engine.close();
            }
        }
        assertThat(closeMs).as("waited the shutdown timeout first").isGreaterThanOrEqualTo(200);
        assertThat(closeMs).as("then interrupted, well before the 10 s default").isLessThan(8_000);
        WorkflowInfo info = client.handle("gated", "g2", String.class).info();
        assertThat(info.status()).isEqualTo(WorkflowStatus.RUNNING);
        assertThat(info.attempts()).as("an interrupted attempt is no crash").isZero();
        assertThat(info.lastError()).isNull();
        assertThat(info.nextAttemptAt()).isNull();
        assertThat(info.leaseOwner()).as("lease released, not left to expire (ttl 60 s)").isNull();
        assertThat(effects.count("g2:work")).as("the step's action never got past the gate").isZero();
        assertThat(journaledSteps("gated", "g2")).isEmpty();
    }

    @Test
    void a_local_run_crash_is_paced_by_the_engines_backoff_and_failed_after_its_max_attempts() {
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry)
                .retry(RetryPolicy.exponential(3, Duration.ofSeconds(15), Duration.ofSeconds(25))).build()) {
            engine.start("alwaysCrashes", "c1", "x", String.class); // runs here at once, and crashes
            await().atMost(WAIT).until(() -> {
                WorkflowInfo i = engine.handle("alwaysCrashes", "c1", String.class).info();
                return i.attempts() == 1 && i.leaseOwner() == null;
            });
            List<Long> written = new ArrayList<>();
            written.add(backoffMicros("c1"));
            assertThat(engine.runNow("alwaysCrashes", "c1")).as("claimable during the backoff").isFalse();
            assertThat(effects.count("c1:body")).isEqualTo(1);

            makeDue("c1");
            assertThat(engine.runNow("alwaysCrashes", "c1")).isTrue(); // the second crash, on this thread
            WorkflowInfo second = engine.handle("alwaysCrashes", "c1", String.class).info();
            assertThat(second.status()).isEqualTo(WorkflowStatus.RUNNING);
            assertThat(second.attempts()).isEqualTo(2);
            written.add(backoffMicros("c1"));
            assertThat(engine.runNow("alwaysCrashes", "c1")).as("claimable during the backoff").isFalse();
            assertThat(written).containsExactly(15_000_000L, 25_000_000L); // 15 s, then 30 s capped at 25 s

            makeDue("c1");
            assertThat(engine.runNow("alwaysCrashes", "c1")).isTrue(); // the third crash spends the budget
            WorkflowInfo failed = engine.handle("alwaysCrashes", "c1", String.class).info();
            assertThat(failed.status()).isEqualTo(WorkflowStatus.FAILED);
            assertThat(failed.attempts()).isEqualTo(3);
            assertThat(failed.failure())
                    .isEqualTo("crashed 3 times; last error: java.lang.IllegalStateException: always c1");
            assertThat(effects.count("c1:body")).isEqualTo(3);
        }
    }

    @Test
    void one_collector_pass_deletes_every_instance_past_retention_batch_after_batch_and_keeps_the_young()
            throws Exception {
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).build()) {
            for (int i = 1; i <= 5; i++) {
                assertThat(engine.start("plain", "old-" + i, "o" + i, String.class).await(WAIT)).isEqualTo("o" + i);
            }
            assertThat(engine.start("plain", "young", "y", String.class).await(WAIT)).isEqualTo("y");
            for (int i = 1; i <= 5; i++) {
                finishedAgo("plain", "old-" + i, Duration.ofHours(2));
            }
            // an hour between passes: only the first pass (at once) runs while this test looks
            try (WorkflowCollector collector = WorkflowCollector.start(engine.client(), Duration.ofHours(1),
                    Duration.ofHours(1),
                    2)) {
                CollectResult pass = await("the first scheduled pass").atMost(WAIT)
                        .until(() -> collector.lastPass().orElse(null), r -> r != null);
                // batches of 2, 2 and 1: the pass ran until a batch deleted fewer than the batch size
                assertThat(pass).isEqualTo(new CollectResult(5, 5, 0));
                assertThat(collector.failedPasses()).isZero();
                for (int i = 1; i <= 5; i++) {
                    assertThat(engine.describe("plain", "old-" + i)).as("old-" + i).isEmpty();
                }
                assertThat(engine.describe("plain", "young")).as("finished within retention").isPresent();
                assertThat(collector.runPass()).isEqualTo(new CollectResult(0, 0, 0));
            }
            assertThat(engine.describe("plain", "young")).isPresent();
            assertThat(engine.handle("plain", "young", String.class).status()).isEqualTo(WorkflowStatus.COMPLETED);
        }
    }

    @Test
    void a_collector_batch_takes_batch_size_candidates_and_one_that_deletes_fewer_ends_the_pass() throws Exception {
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).build();
                WorkflowCollector collector = WorkflowCollector.start(engine.client(), Duration.ofHours(1),
                        Duration.ofHours(1),
                        2)) {
            // the scheduled first pass runs at once, before anything here is old enough
            assertThat(await("the first scheduled pass").atMost(WAIT).until(() -> collector.lastPass().orElse(null),
                    r -> r != null))
                    .isEqualTo(new CollectResult(0, 0, 0));
            for (int i = 1; i <= 5; i++) {
                assertThat(engine.start("plain", "aged-" + i, "a" + i, String.class).await(WAIT)).isEqualTo("a" + i);
                finishedAgo("plain", "aged-" + i, Duration.ofHours(7 - i)); // aged-1 the oldest: first candidate
            }
            try (Connection c = POSTGRES.dataSource().getConnection()) {
                c.setAutoCommit(false);
                try (PreparedStatement lock = c.prepareStatement(
                        "SELECT pg_advisory_xact_lock(hashtextextended(? || '#wf#plain#aged-1', 0))")) {
                    lock.setString(1, store.schema());
                    lock.execute(); // as a start or retry of aged-1 under way would
                }
                // first batch: aged-1 (busy, skipped) and aged-2 (deleted); one deletion of two ends the pass
                assertThat(collector.runPass()).isEqualTo(new CollectResult(2, 1, 1));
                c.commit();
            }
            assertThat(engine.describe("plain", "aged-1")).isPresent();
            assertThat(engine.describe("plain", "aged-2")).isEmpty();
            assertThat(engine.describe("plain", "aged-3")).as("left for the next pass").isPresent();
            // batches of 2, 2, then an empty one
            assertThat(collector.runPass()).isEqualTo(new CollectResult(4, 4, 0));
            for (int i = 1; i <= 5; i++) {
                assertThat(engine.describe("plain", "aged-" + i)).as("aged-" + i).isEmpty();
            }
        }
    }

    private static List<String> journaledSteps(String name, String id) {
        return client.describe(name, id).orElseThrow().journal().stream().map(JournalEntry::step)
                .filter(s -> s != null && !s.startsWith("__")).toList();
    }

    /** What the last crash wrote: {@code next_attempt_at - updated_at}, in microseconds (exact). */
    private static long backoffMicros(String id) {
        return WorkflowTesting.count(POSTGRES, "SELECT (EXTRACT(EPOCH FROM (next_attempt_at - updated_at)) * 1000000)"
                + "::bigint FROM " + q() + ".workflows WHERE name = 'alwaysCrashes' AND id = '" + id + "'");
    }

    private static void makeDue(String id) {
        POSTGRES.execute("UPDATE " + q() + ".workflows SET next_attempt_at = now() WHERE name = 'alwaysCrashes'"
                + " AND id = '" + id + "'");
    }

    private static void finishedAgo(String name, String id, Duration ago) {
        POSTGRES.execute("UPDATE " + q() + ".workflows SET completed_at = now() - interval '" + ago.toSeconds()
                + " seconds' WHERE name = '" + name + "' AND id = '" + id + "'");
    }

    private static String q() {
        return "\"" + store.schema() + "\"";
    }
}
