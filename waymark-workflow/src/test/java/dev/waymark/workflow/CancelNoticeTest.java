package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.BroadcastRegistration;
import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.internal.Cancellation;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.WorkflowOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A cancellation stops a running body before its next fresh step, whichever process cancels: a body
 * cancelled between two steps (its last entry already committed, so no refused journal write can
 * stop it) never runs the next step's action, and the run ends cancelled. A notice the instance
 * row does not confirm changes nothing.
 */
class CancelNoticeTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
    private static final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

    private static EventStore store;
    private static EventStore otherProcessStore;
    private static WorkflowEngine engine;
    private static WorkflowClient otherProcess;
    /** Cancellations this engine's store handle heard, after the engine's own listener did. */
    private static final List<String> heard = new CopyOnWriteArrayList<>();
    private static BroadcastRegistration hearing;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry().register("twoSteps", String.class, String.class,
                (ctx, in) -> {
                    ctx.step("first", Integer.class, () -> effects.hit(ctx.workflowId() + ":first"));
                    // code between steps (a computation, a wait): the cancellation lands here, after the
                    // first step's entry committed, so no journal write of the first step can refuse it
                    effects.hit(ctx.workflowId() + ":between");
                    gates.get(ctx.workflowId()).await();
                    ctx.step("second", Integer.class, () -> effects.hit(ctx.workflowId() + ":second"));
                    return "done";
                });
        engine = WorkflowTesting.fastEngine(store, registry).build();
        // registered after the engine's listener: called after it, on the same thread
        hearing = StoreInternals.of(store).onBroadcast(Cancellation.TOPIC, heard::add);
        otherProcessStore = EventStore.builder(POSTGRES.newDataSource(2)).build();
        otherProcess = WorkflowClient.create(otherProcessStore);
        awaitListening();
    }

    @AfterAll
    static void tearDown() {
        hearing.close();
        engine.close();
        otherProcessStore.close();
        store.close();
    }

    @Test
    void a_cancel_from_another_process_stops_the_body_before_its_next_step() throws Exception {
        WorkflowHandle<String> h = startBlocked("remote");
        assertThat(otherProcess.cancel("twoSteps", "remote")).isEqualTo(CancelOutcome.CANCELLED);
        await().atMost(WAIT).until(() -> heard.contains("twoSteps/remote"));
        gates.get("remote").countDown();
        assertThat(h.awaitOutcome(WAIT)).isInstanceOf(WorkflowOutcome.Cancelled.class);
        // before: the second step's action ran, and only its journal write was refused
        assertThat(effects.count("remote:second")).isZero();
        assertThat(effects.count("remote:first")).isEqualTo(1);
        assertThat(engine.describe("twoSteps", "remote").orElseThrow().journal())
                .noneMatch(e -> "second".equals(e.step()));
    }

    @Test
    void a_cancel_from_this_engine_stops_the_body_before_its_next_step() throws Exception {
        WorkflowHandle<String> h = startBlocked("local");
        assertThat(engine.cancel("twoSteps", "local")).isEqualTo(CancelOutcome.CANCELLED);
        assertThat(heard).contains("twoSteps/local"); // heard at once, on the cancelling thread
        gates.get("local").countDown();
        assertThat(h.awaitOutcome(WAIT)).isInstanceOf(WorkflowOutcome.Cancelled.class);
        assertThat(effects.count("local:second")).isZero();
    }

    @Test
    void a_notice_the_instance_row_does_not_confirm_is_ignored() throws Exception {
        WorkflowHandle<String> h = startBlocked("rumour");
        StoreInternals.of(otherProcessStore).broadcast(Cancellation.TOPIC, "twoSteps/rumour"); // no cancel behind it
        await().atMost(WAIT).until(() -> heard.contains("twoSteps/rumour"));
        gates.get("rumour").countDown();
        assertThat(h.await(WAIT)).isEqualTo("done");
        assertThat(effects.count("rumour:second")).isEqualTo(1);
    }

    /** Starts an instance and waits until its body waits at the gate between its two steps. */
    private static WorkflowHandle<String> startBlocked(String id) {
        gates.put(id, new CountDownLatch(1));
        WorkflowHandle<String> h = engine.start("twoSteps", id, "x", String.class);
        await().atMost(WAIT).until(() -> effects.count(id + ":between") == 1);
        return h;
    }

    /** Broadcasts pings from the other process's handle until this engine's handle hears one. */
    private static void awaitListening() {
        List<String> pings = new CopyOnWriteArrayList<>();
        try (BroadcastRegistration r = StoreInternals.of(store).onBroadcast("test.ping", pings::add)) {
            await("the engine's LISTEN connection is up").atMost(WAIT).pollInterval(Duration.ofMillis(100))
                    .until(() -> {
                        StoreInternals.of(otherProcessStore).broadcast("test.ping", "ping");
                        return !pings.isEmpty();
                    });
        }
    }
}
