package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static dev.waymark.workflow.WorkflowTesting.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Settlements made by many threads at once share transactions: every awakeable is still settled
 * exactly once (by the first settlement to commit, whose value the workflow gets), and every
 * settlement wakes its own workflow in the process that made it.
 */
class SharedSettlementTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int WORKFLOWS = 60;
    private static final int THREADS = 8;
    private static final Map<String, UUID> published = new ConcurrentHashMap<>();

    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry().register("approval", String.class, String.class,
                (ctx, in) -> {
                    Awakeable<String> decision = ctx.awakeable("decision", String.class);
                    ctx.step("publish", () -> {
                        published.put(ctx.workflowId(), decision.id());
                        return null;
                    });
                    return decision.await();
                });
        engine = WorkflowTesting.fastEngine(store, registry).build();
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    private record Attempt(String id, String value) {}

    @Test
    void many_threads_settling_many_awakeables_settle_each_exactly_once_and_every_workflow_completes()
            throws Exception {
        List<WorkflowHandle<String>> handles = new ArrayList<>();
        List<Attempt> attempts = new ArrayList<>();
        for (int i = 0; i < WORKFLOWS; i++) {
            String id = "w-" + i;
            handles.add(engine.start("approval", id, "x", String.class));
            for (int k = 0; k < 3; k++) { // three racing settlements per awakeable
                attempts.add(new Attempt(id, id + "/" + k));
            }
        }
        await().atMost(WAIT).until(() -> handles.stream().allMatch(h -> h.status() == WorkflowStatus.SUSPENDED));
        Collections.shuffle(attempts, new Random(42));

        // no resume worker runs: a workflow goes on only because its settlement woke it here
        Map<Attempt, AwakeableOutcome> outcomes = new ConcurrentHashMap<>();
        CountDownLatch go = new CountDownLatch(1);
        try (ExecutorService threads = Executors.newFixedThreadPool(THREADS)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int first = t;
                done.add(threads.submit(() -> {
                    go.await();
                    for (int a = first; a < attempts.size(); a += THREADS) {
                        Attempt attempt = attempts.get(a);
                        outcomes.put(attempt, engine.completeAwakeable(published.get(attempt.id()), attempt.value()));
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) {
                f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
        }

        assertThat(outcomes).hasSize(attempts.size());
        for (WorkflowHandle<String> h : handles) {
            List<Attempt> settled = outcomes.entrySet().stream()
                    .filter(e -> e.getKey().id().equals(h.id()) && e.getValue() == AwakeableOutcome.SETTLED)
                    .map(Map.Entry::getKey).toList();
            assertThat(settled).as("settlements of %s", h.id()).hasSize(1);
            assertThat(outcomes.entrySet().stream().filter(e -> e.getKey().id().equals(h.id()))
                    .map(Map.Entry::getValue)).containsOnlyOnce(AwakeableOutcome.SETTLED)
                    .containsOnly(AwakeableOutcome.SETTLED, AwakeableOutcome.ALREADY_COMPLETED);
            assertThat(h.await(WAIT)).as("result of %s", h.id()).isEqualTo(settled.getFirst().value());
        }
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.workflow_awakeables WHERE status = 'completed'"))
                .isEqualTo(WORKFLOWS);
    }
}
