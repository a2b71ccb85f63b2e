package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.resume.ResumeWorker;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The run that journals a value sees what every replay sees: {@code jsonb} reorders object keys and
 * rewrites numbers, so a step's value, an input and a result are decoded from the form the journal
 * gives back, also on the run that wrote them; what {@code jsonb} cannot hold is refused by name.
 */
class JournalValueFormTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
    /** What each run of "observes" saw: the map's key order and the decimal, one line per run. */
    private static final List<String> seen = new CopyOnWriteArrayList<>();

    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("observes", String.class, String.class, (ctx, in) -> {
                    @SuppressWarnings("unchecked")
                    Map<String, Integer> fruit = ctx.step("fruit", Map.class, () -> {
                        Map<String, Integer> m = new LinkedHashMap<>();
                        m.put("banana", 1);
                        m.put("kiwi", 2);
                        m.put("fig", 3);
                        return m;
                    });
                    BigDecimal big = ctx.step("big", BigDecimal.class, () -> new BigDecimal("1E+7"));
                    seen.add(new ArrayList<>(fruit.keySet()) + " " + big);
                    if (effects.hit(ctx.workflowId() + ":attempt") == 1) {
                        throw new IllegalStateException("crash after the steps: the next run replays them");
                    }
                    return fruit.keySet() + " " + big;
                })
                .register("echo", String.class, String.class, (ctx, in) -> ctx.step("echo", String.class, () -> in))
                .register("nul", String.class, String.class,
                        (ctx, in) -> ctx.step("nul", String.class, () -> "a\u0000b"));
        engine = WorkflowTesting.fastEngine(store, registry).retry(WorkflowTesting.RETRY.withMaxAttempts(3)).build();
        worker = engine.resumeWorker(
                WorkflowTesting.fastResume().toBuilder().retry(WorkflowTesting.RETRY.withMaxAttempts(3)).build())
                .start();
    }

    @AfterAll
    static void tearDown() {
        worker.close();
        engine.close();
        store.close();
    }

    @Test
    void a_step_value_decoded_on_the_run_that_journals_it_is_the_one_every_replay_decodes() throws Exception {
        WorkflowHandle<String> h = engine.start("observes", "o-1", "x", String.class);
        // jsonb order: shorter keys first (fig, kiwi, banana); 1E+7 reads back as 10000000
        assertThat(h.await(WAIT)).isEqualTo("[fig, kiwi, banana] 10000000");
        // before: the first run saw [banana, kiwi, fig] 1E+7, the replay [fig, kiwi, banana] 10000000
        assertThat(seen).containsExactly("[fig, kiwi, banana] 10000000", "[fig, kiwi, banana] 10000000");
    }

    @Test
    void values_jsonb_cannot_hold_are_refused_by_name_and_nothing_is_written() throws Exception {
        long before = WorkflowTesting.count(POSTGRES, "SELECT count(*) FROM waymark.workflows");
        // before: the lone surrogate was stored as '?', so the first run and a replay saw different inputs
        assertThatThrownBy(() -> engine.start("echo", "e-1", "a\uD83D", String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("input of workflow echo/e-1 holds a lone UTF-16 surrogate (\\ud83d)");
        // before: the database's "unsupported Unicode escape sequence", not a workflow input error
        assertThatThrownBy(() -> engine.start("echo", "e-2", "a\u0000b", String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("input of workflow echo/e-2 holds a NUL character");
        assertThat(WorkflowTesting.count(POSTGRES, "SELECT count(*) FROM waymark.workflows")).isEqualTo(before);
        // a valid pair (an emoji) is kept as it is
        assertThat(engine.start("echo", "e-3", "a\uD83D\uDE00", String.class).await(WAIT)).isEqualTo("a\uD83D\uDE00");
    }

    @Test
    void a_step_value_jsonb_cannot_hold_fails_the_step_with_the_step_named() {
        WorkflowHandle<String> h = engine.start("nul", "n-1", "x", String.class);
        assertThatThrownBy(() -> h.await(WAIT)).hasMessageContaining("result of step 'nul' of nul/n-1 holds a NUL");
    }
}
