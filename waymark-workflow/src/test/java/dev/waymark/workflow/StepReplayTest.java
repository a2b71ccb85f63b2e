package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static dev.waymark.workflow.WorkflowTesting.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.UnknownWorkflowException;
import dev.waymark.workflow.exception.WorkflowFailedException;
import dev.waymark.workflow.exception.WorkflowStartConflictException;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.JournalEntry;
import dev.waymark.workflow.status.WorkflowStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class StepReplayTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();

    record Order(String id, int amount) {}

    record Amount(double amount) {}

    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("threeSteps", Order.class, String.class, (ctx, order) -> {
                    int a = ctx.step("reserve", Integer.class, () -> effects.hit(ctx.workflowId() + ":reserve"));
                    int b = ctx.step("charge", Integer.class, () -> effects.hit(ctx.workflowId() + ":charge"));
                    if (order.id().startsWith("crash") && effects.hit(ctx.workflowId() + ":attempt") == 1) {
                        throw new IllegalStateException("crash between steps");
                    }
                    int c = ctx.step("ship", Integer.class, () -> effects.hit(ctx.workflowId() + ":ship"));
                    return order.id() + ":" + a + b + c;
                })
                .register("checked", String.class, String.class, (ctx, in) -> {
                    try {
                        ctx.step("io", String.class, () -> {
                            throw new IOException("disk full");
                        });
                        return "no exception";
                    } catch (IOException e) {
                        return "caught " + e.getMessage();
                    }
                })
                .register("roundTrip", String.class, Double.class,
                        (ctx, in) -> ctx.step("approx", Double.class, () -> 2.0d))
                .register("typeClash", String.class, String.class, (ctx, in) -> {
                    ctx.step("x", Integer.class, () -> 1);
                    return ctx.step("x", String.class, () -> "one");
                })
                .register("unserializable", String.class, String.class, (ctx, in) -> {
                    ctx.step("bad", Object.class, Object::new);
                    return "unreachable";
                })
                .register("halfEmoji", String.class, String.class,
                        (ctx, in) -> ctx.step("item-\uD83D", String.class, () -> "x"))
                .register("reserved", String.class, String.class,
                        (ctx, in) -> ctx.step("sleep:sneaky", String.class, () -> "x"))
                .register("negativeSleep", String.class, String.class, (ctx, in) -> {
                    ctx.sleep("back", Duration.ofSeconds(-1));
                    return "unreachable";
                })
                .register("selfChild", String.class, String.class,
                        (ctx, in) -> ctx.child("me", "selfChild", ctx.workflowId(), in, String.class).await())
                .register("amounts", Amount.class, Double.class, (ctx, a) -> a.amount())
                // spawns an "amounts" child with the id it is given
                .register("spawner", String.class, Double.class,
                        (ctx, childId) -> ctx.child("c", "amounts", childId, new Amount(1.0), Double.class).await())
                // generation 0 of id "x" goes on as generation 1; steps "s" (generation 0), "0:s" (1)
                .register("colon", Integer.class, String.class, (ctx, gen) -> {
                    if (gen == 0 && ctx.workflowId().equals("x")) {
                        ctx.continueAsNew(1);
                    }
                    return ctx.step(gen == 0 ? "s" : "0:s", String.class, () -> ctx.workflowId() + "/" + gen);
                });
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
    void journals_each_step_once_and_completes() throws Exception {
        WorkflowHandle<String> h = engine.start("threeSteps", "o-1", new Order("o-1", 5), String.class);
        assertThat(h.await(WAIT)).isEqualTo("o-1:111");
        List<JournalEntry> journal = engine.describe("threeSteps", "o-1").orElseThrow().journal();
        assertThat(journal).extracting(JournalEntry::type)
                .containsExactly("WorkflowStarted", "StepRecorded", "StepRecorded", "StepRecorded",
                        "WorkflowCompleted");
        assertThat(journal).extracting(JournalEntry::step).containsExactly(null, "reserve", "charge", "ship", null);
        assertThat(h.status()).isEqualTo(WorkflowStatus.COMPLETED);
    }

    @Test
    void a_crash_between_steps_reruns_only_the_tail() throws Exception {
        WorkflowHandle<String> h = engine.start("threeSteps", "crash-1", new Order("crash-1", 5), String.class);
        assertThat(h.await(WAIT)).isEqualTo("crash-1:111");
        assertThat(effects.count("crash-1:attempt")).isEqualTo(2);
        assertThat(effects.count("crash-1:reserve")).isEqualTo(1);
        assertThat(effects.count("crash-1:charge")).isEqualTo(1);
        assertThat(effects.count("crash-1:ship")).isEqualTo(1);
        // the release after the successful attempt (just after the completion commits) clears the crash record
        org.awaitility.Awaitility.await().atMost(WAIT).until(() -> h.info().leaseOwner() == null);
        assertThat(h.info().attempts()).isZero();
    }

    @Test
    void a_checked_exception_of_a_step_reaches_the_body_and_nothing_is_journaled() throws Exception {
        assertThat(engine.start("checked", "c-1", "x", String.class).await(WAIT)).isEqualTo("caught disk full");
        assertThat(engine.describe("checked", "c-1").orElseThrow().journal())
                .extracting(JournalEntry::step).doesNotContain("io");
    }

    @Test
    void a_step_returns_the_journaled_round_trip() throws Exception {
        assertThat(engine.start("roundTrip", "rt-1", "x", Double.class).await(WAIT)).isEqualTo(2.0d);
    }

    @Test
    void starting_the_same_id_is_idempotent_and_a_different_input_is_refused() throws Exception {
        WorkflowHandle<String> first = engine.start("threeSteps", "idem-1", new Order("idem-1", 1), String.class);
        WorkflowHandle<String> again = engine.start("threeSteps", "idem-1", new Order("idem-1", 1), String.class);
        assertThat(again.await(WAIT)).isEqualTo(first.await(WAIT));
        assertThatThrownBy(() -> engine.start("threeSteps", "idem-1", new Order("idem-1", 2), String.class))
                .isInstanceOf(WorkflowStartConflictException.class)
                .hasMessageContaining("threeSteps/idem-1 already exists (completed) with a different input");
        assertThat(effects.count("idem-1:reserve")).isEqualTo(1);
    }

    @Test
    void bad_input_is_refused_with_a_clear_error_and_nothing_written() {
        long before = count(POSTGRES, "SELECT count(*) FROM waymark.workflows");
        long events = count(POSTGRES, "SELECT count(*) FROM waymark.events");
        assertThatThrownBy(() -> engine.start("nope", "1", "x", String.class))
                .isInstanceOf(UnknownWorkflowException.class).hasMessageContaining("workflow 'nope' is not registered");
        assertThatThrownBy(() -> engine.start("threeSteps", "u-1", new Object(), String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("cannot serialize java.lang.Object");
        assertThatThrownBy(() -> engine.start("threeSteps", "big-1", "x".repeat(2 << 20), String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("input of workflow threeSteps/big-1 is")
                .hasMessageContaining("the limit is 1048576");
        assertThatThrownBy(() -> engine.start("three-steps", "1", "x", String.class))
                .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("contains '-'");
        assertThatThrownBy(() -> engine.start("threeSteps", "a#1", "x", String.class))
                .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("reserved character ('#')");
        assertThatThrownBy(() -> engine.start("threeSteps", "", "x", String.class))
                .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("id must not be empty");
        // before: stored as 'a?', the same row as the id 'a?' (and as every other lone half)
        assertThatThrownBy(() -> engine.start("threeSteps", "a\uD83D", new Order("a", 1), String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("workflow id 'a?' contains a lone UTF-16 surrogate (\\ud83d)");
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.workflows")).isEqualTo(before);
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.events")).isEqualTo(events);
    }

    @Test
    void an_id_whose_journal_stream_name_could_outgrow_the_store_limit_is_refused_and_nothing_written()
            throws Exception {
        long before = count(POSTGRES, "SELECT count(*) FROM waymark.workflows");
        long events = count(POSTGRES, "SELECT count(*) FROM waymark.events");
        // '$wf-amounts-<id>#2147483647' must fit 512 bytes: 12 + 11 bytes leave 489 for the id
        // ('账' is 3 bytes of UTF-8). Before: 171 of them (within 200 characters) failed with a
        // StoreException, and 164 started, to fail when continue-as-new reached generation 10,000,000.
        for (int chars : new int[]{171, 164}) {
            assertThatThrownBy(() -> engine.start("amounts", "账".repeat(chars), new Amount(1.0), Double.class))
                    .isInstanceOf(InvalidWorkflowInputException.class)
                    .hasMessageContaining(
                            "workflow id of amounts is " + chars * 3 + " bytes of UTF-8, more than the 489")
                    .hasMessageContaining("the event store's limit is 512");
        }
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.workflows")).isEqualTo(before);
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.events")).isEqualTo(events);
        assertThat(engine.start("amounts", "账".repeat(163), new Amount(2.0), Double.class).await(WAIT))
                .isEqualTo(2.0);
        // a child's id too: the spawn is refused and nothing is created
        WorkflowHandle<Double> parent = engine.start("spawner", "sp-1", "账".repeat(164), Double.class);
        assertThatThrownBy(() -> parent.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining(InvalidWorkflowInputException.class.getName())
                .hasMessageContaining("the event store's limit is 512");
        assertThat(engine.describe("amounts", "账".repeat(164))).isEmpty();
    }

    @Test
    void a_step_of_an_id_with_a_colon_is_never_taken_for_another_instances_step() throws Exception {
        // "colon"/"x:1" generation 0 step "s" and "colon"/"x" generation 1 step "0:s" both read
        // "colon:x:1:0:s" in the frozen entry-id form: the second was handed the first one's result
        assertThat(engine.start("colon", "x:1", 0, String.class).await(WAIT)).isEqualTo("x:1/0");
        assertThat(engine.start("colon", "x", 0, String.class).await(WAIT)).isEqualTo("x/1");
    }

    @Test
    void starting_again_with_an_equal_input_is_the_same_instance_however_jsonb_wrote_its_numbers() throws Exception {
        // jsonb keeps 2.5E7 as 25000000: read back, it was another kind of JSON number
        WorkflowHandle<Double> first = engine.start("amounts", "am-1", new Amount(25_000_000.0), Double.class);
        WorkflowHandle<Double> again = engine.start("amounts", "am-1", new Amount(25_000_000.0), Double.class);
        assertThat(again.await(WAIT)).isEqualTo(25_000_000.0).isEqualTo(first.await(WAIT));
        assertThatThrownBy(() -> engine.start("amounts", "am-1", new Amount(1.0), Double.class))
                .isInstanceOf(WorkflowStartConflictException.class);
    }

    @Test
    void an_input_the_workflow_cannot_read_is_refused_and_nothing_is_written() {
        long before = count(POSTGRES, "SELECT count(*) FROM waymark.workflows");
        // before: written, then every attempt crashed decoding it until the instance failed
        assertThatThrownBy(() -> engine.start("threeSteps", "oops-1", "oops", String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("input of workflow threeSteps/oops-1 cannot be read as")
                .hasMessageContaining("Order");
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.workflows")).isEqualTo(before);
    }

    @Test
    void bad_steps_crash_the_run_with_a_clear_error_and_fail_after_the_budget() throws Exception {
        WorkflowHandle<String> clash = engine.start("typeClash", "t-1", "x", String.class);
        assertThatThrownBy(() -> clash.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining("step 'x' is used twice in one run of workflow typeClash/t-1");
        WorkflowHandle<String> bad = engine.start("unserializable", "s-1", "x", String.class);
        assertThatThrownBy(() -> bad.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining("failed on attempt 1 without retries")
                .hasMessageContaining("cannot serialize java.lang.Object");
        WorkflowHandle<String> reserved = engine.start("reserved", "res-1", "x", String.class);
        assertThatThrownBy(() -> reserved.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining("step name 'sleep:sneaky' uses the reserved prefix 'sleep:'");
        // before: journaled as 'item-?', so every replay missed the entry and ran the step again
        WorkflowHandle<String> half = engine.start("halfEmoji", "he-1", "x", String.class);
        assertThatThrownBy(() -> half.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining("step name 'item-?' contains a lone UTF-16 surrogate");
        assertThat(engine.describe("unserializable", "s-1").orElseThrow().journal())
                .extracting(JournalEntry::type).containsExactly("WorkflowStarted", "WorkflowFailed");
    }

    @Test
    void every_bad_argument_to_the_context_is_an_invalid_workflow_input_exception() throws Exception {
        // before: IllegalArgumentException for these, InvalidWorkflowInputException for a child step
        // name ending in ':result' and for the child's name and id
        String invalid = InvalidWorkflowInputException.class.getName() + ": ";
        List<String[]> cases = List.of(
                new String[]{"typeClash", "step 'x' is used twice in one run of workflow typeClash/ic-typeClash"},
                new String[]{"reserved", "step name 'sleep:sneaky' uses the reserved prefix 'sleep:'"},
                new String[]{"halfEmoji", "step name 'item-?' contains a lone UTF-16 surrogate"},
                new String[]{"negativeSleep", "sleep 'back' needs a duration >= 0, got PT-1S"},
                new String[]{"selfChild", "workflow selfChild/ic-selfChild cannot be its own child"});
        for (String[] c : cases) {
            WorkflowHandle<String> h = engine.start(c[0], "ic-" + c[0], "x", String.class);
            assertThatThrownBy(() -> h.await(WAIT)).as(c[0]).isInstanceOf(WorkflowFailedException.class)
                    .hasMessageContaining(invalid + c[1]);
        }
        assertThatThrownBy(() -> WorkflowNames.requireStepName("")).isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessage("step name must not be empty");
        assertThatThrownBy(() -> WorkflowNames.requireChildStepName("awk:x"))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessage("step name 'awk:x' uses the reserved prefix 'awk:'");
    }
}
