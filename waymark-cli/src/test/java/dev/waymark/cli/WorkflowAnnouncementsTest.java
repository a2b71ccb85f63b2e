package dev.waymark.cli;

import dev.waymark.core.RetryPolicy;
import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.BroadcastRegistration;
import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.awakeable.AwakeableFailedException;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowHandle;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.status.WorkflowStatus;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The CLI's cancel, complete-awakeable, fail-awakeable and retry reach a running engine and resume
 * worker at once, as the API's do (README: a cancellation is announced to every engine; a settlement
 * or a retry wakes the resume workers). The workers here poll once an hour and their store ticks once
 * every ten minutes, so only an announcement can make them react within seconds.
 */
class WorkflowAnnouncementsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    /** Well under the poll interval (an hour) and the store's fallback tick (ten minutes). */
    private static final Duration PROMPTLY = Duration.ofSeconds(5);

    private static final Map<String, UUID> decisions = new ConcurrentHashMap<>();
    private static final CountDownLatch betweenSteps = new CountDownLatch(1);
    private static final CountDownLatch goOn = new CountDownLatch(1);
    private static final AtomicInteger secondSteps = new AtomicInteger();
    private static final AtomicInteger flakyRuns = new AtomicInteger();

    private static String url;
    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;

    @BeforeAll
    static void setUp() {
        url = POSTGRES.jdbcUrl();
        store = EventStore.builder(POSTGRES.newDataSource(8)).fallbackPoll(Duration.ofMinutes(10)).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("twoSteps", String.class, String.class, (ctx, in) -> {
                    ctx.step("first", String.class, () -> "one");
                    betweenSteps.countDown();
                    goOn.await(30, TimeUnit.SECONDS); // the body between two steps when the cancel comes
                    return ctx.step("second", String.class, () -> "two " + secondSteps.incrementAndGet());
                })
                .register("approval", String.class, String.class, (ctx, in) -> {
                    var decision = ctx.awakeable("decision", String.class);
                    ctx.step("publish", () -> {
                        decisions.put(ctx.workflowId(), decision.id());
                        return null;
                    });
                    try {
                        return "approved by " + decision.await();
                    } catch (AwakeableFailedException e) {
                        return "rejected: " + e.reason();
                    }
                })
                .register("flaky", String.class, String.class, (ctx, in) -> {
                    if (flakyRuns.incrementAndGet() == 1) {
                        throw new IllegalStateException("first run fails");
                    }
                    return "second run";
                });
        engine = WorkflowEngine.builder(store, registry)
                .retry(RetryPolicy.exponential(1, Duration.ofMillis(1), Duration.ofMillis(5)))
                .holdWaits(Duration.ZERO) // the announcements are of suspended instances
                .build();
        worker = engine.resumeWorker(ResumeOptions.builder().pollInterval(Duration.ofHours(1))
                .retry(RetryPolicy.exponential(1, Duration.ofMillis(1), Duration.ofMillis(5)))
                .build()).start();
    }

    @AfterAll
    static void tearDown() {
        goOn.countDown();
        worker.close();
        engine.close();
        store.close();
    }

    private static void cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = WaymarkCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        assertThat(code).as(String.join(" ", args) + ": " + out + err).isZero();
    }

    private static UUID decisionOf(String id) {
        return Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> decisions.get(id), d -> d != null);
    }

    @Test
    void a_cli_cancel_stops_a_running_body_before_its_next_step() throws Exception {
        WorkflowHandle<String> h = engine.start("twoSteps", "c-1", "x", String.class);
        assertThat(betweenSteps.await(20, TimeUnit.SECONDS)).isTrue();
        CountDownLatch heard = new CountDownLatch(1);
        // registered after the engine's own listener, which is therefore called first
        try (BroadcastRegistration r = StoreInternals.of(store).onBroadcast("waymark.workflow.cancelled", m -> {
            if (m.equals("twoSteps/c-1")) {
                heard.countDown();
            }
        })) {
            cli("workflows", "cancel", "twoSteps", "c-1", "--force", "--url", url);
            // before: the CLI's store sent nothing, and the running engine never heard of it
            assertThat(heard.await(PROMPTLY.toMillis(), TimeUnit.MILLISECONDS)).as("announced").isTrue();
        }
        goOn.countDown();
        Awaitility.await().atMost(PROMPTLY).until(() -> h.status() == WorkflowStatus.CANCELLED
                && h.info().leaseOwner() == null);
        // before: the second step's action ran (its journal write was then refused)
        assertThat(secondSteps.get()).isZero();
    }

    @Test
    void a_cli_settlement_of_an_awakeable_resumes_its_workflow_at_once() throws Exception {
        WorkflowHandle<String> completed = engine.start("approval", "a-1", "x", String.class);
        WorkflowHandle<String> failed = engine.start("approval", "a-2", "x", String.class);
        UUID a1 = decisionOf("a-1");
        UUID a2 = decisionOf("a-2");
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> completed.status() == WorkflowStatus.SUSPENDED
                && failed.status() == WorkflowStatus.SUSPENDED);
        cli("workflows", "complete-awakeable", a1.toString(), "--value", "\"alice\"", "--force", "--url", url);
        // before: resumed at the worker's next poll, an hour later
        assertThat(completed.await(PROMPTLY)).isEqualTo("approved by alice");
        cli("workflows", "fail-awakeable", a2.toString(), "--reason", "no budget", "--force", "--url", url);
        assertThat(failed.await(PROMPTLY)).isEqualTo("rejected: no budget");
    }

    @Test
    void a_cli_retry_of_a_failed_workflow_resumes_it_at_once() throws Exception {
        WorkflowHandle<String> h = engine.start("flaky", "f-1", "x", String.class);
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> h.status() == WorkflowStatus.FAILED);
        cli("workflows", "retry", "flaky", "f-1", "--force", "--url", url);
        // before: run again at the worker's next poll, an hour later
        assertThat(h.await(PROMPTLY)).isEqualTo("second run");
    }
}
