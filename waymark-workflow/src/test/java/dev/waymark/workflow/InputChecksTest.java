package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static dev.waymark.workflow.WorkflowTesting.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.StepDecodeException;
import dev.waymark.workflow.exception.WorkflowFailedException;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.JournalEntry;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Inputs refused before they do harm: ids and names that garble listings, user values printed raw in
 * messages, a null input a workflow cannot take, a step result that can never be journaled, and
 * messages that shorten a value in the middle of a character.
 */
class InputChecksTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();

    record Order(String id, int amount) {}

    /** Characters that are invisible or move text about: line and paragraph separators, bidi controls, and so on. */
    private static final List<String> GARBLING = List.of("\u2028", "\u2029", "\u202E", "\u200B", "\u2066", "\uFEFF",
            "\u0085", "\n", "\u001B");

    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("order", Order.class, String.class, (ctx, o) -> "order " + o.id())
                .register("nothing", Void.class, String.class, (ctx, none) -> "no input: " + none)
                .register("text", String.class, String.class, (ctx, s) -> "text " + s)
                .register("stepNamed", String.class, String.class,
                        (ctx, name) -> ctx.step(name, String.class, () -> "ran " + effects.hit(ctx.workflowId())))
                .register("spawns", String.class, String.class,
                        (ctx, childId) -> ctx.child("c", "text", childId, "x", String.class).await())
                .register("spawnsNull", String.class, String.class,
                        (ctx, in) -> ctx.child("c", "order", ctx.workflowId() + ".c", null, String.class).await())
                .register("badResult", String.class, String.class, (ctx, in) -> {
                    ctx.step("receipt", Object.class, () -> {
                        effects.hit(ctx.workflowId() + ":receipt");
                        return new Object();
                    });
                    return "unreachable";
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

    private static String escaped(String c) {
        return String.format("\\u%04x", (int) c.charAt(0));
    }

    @Test
    void an_id_with_an_invisible_or_reordering_character_is_refused_and_the_message_shows_it_escaped() {
        long before = count(POSTGRES, "SELECT count(*) FROM waymark.workflows");
        for (String c : GARBLING) {
            String id = "ord" + c + "er-1";
            // before: U+2028, U+2029, U+202E, U+200B, U+2066 and U+FEFF were accepted; U+0085 was
            // refused with the character printed raw in the message
            assertThatThrownBy(() -> engine.start("text", id, "x", String.class)).as(escaped(c))
                    .isInstanceOf(InvalidWorkflowInputException.class)
                    .hasMessageContaining("workflow id 'ord" + escaped(c) + "er-1'")
                    .hasMessageNotContaining(c);
        }
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.workflows")).isEqualTo(before);
        // a child's id as well: the spawn is refused and the parent fails
        WorkflowHandle<String> parent = engine.start("spawns", "sp-1", "kid\u202Egnp.exe", String.class);
        assertThatThrownBy(() -> parent.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining("workflow id 'kid\\u202egnp.exe'");
        assertThat(engine.describe("text", "kid\u202Egnp.exe")).isEmpty();
    }

    @Test
    void a_workflow_name_with_a_control_character_is_refused_with_the_character_escaped() {
        // before: "contains '<U+0085>'", the character itself
        assertThatThrownBy(() -> engine.start("te\u0085xt", "n-1", "x", String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessage("workflow name 'te\\u0085xt' contains '\\u0085': use letters, digits, '_' and '.'");
    }

    @Test
    void a_new_step_name_with_an_invisible_character_fails_the_run_before_its_action() throws Exception {
        WorkflowHandle<String> h = engine.start("stepNamed", "sn-1", "pay\u2028ment", String.class);
        // before: journaled, and listed as two lines
        assertThatThrownBy(() -> h.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining(
                        "step name 'pay\\u2028ment' contains an invisible or control character (\\u2028)");
        assertThat(effects.count("sn-1")).isZero();
        assertThat(engine.start("stepNamed", "sn-2", "pay ment", String.class).await(WAIT))
                .as("a plain space is fine").isEqualTo("ran 1");
    }

    @Test
    void a_null_input_is_refused_at_start_unless_the_input_type_is_void() throws Exception {
        long before = count(POSTGRES, "SELECT count(*) FROM waymark.workflows");
        // before: started, then every attempt crashed on o.id() until the instance failed
        assertThatThrownBy(() -> engine.start("order", "null-1", null, String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("input of workflow order/null-1 is null")
                .hasMessageContaining(Order.class.getName())
                .hasMessageContaining("Void");
        assertThatThrownBy(() -> engine.start("text", "null-2", null, String.class))
                .isInstanceOf(InvalidWorkflowInputException.class);
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.workflows")).isEqualTo(before);
        assertThat(engine.start("nothing", "null-3", null, String.class).await(WAIT)).isEqualTo("no input: null");
        // a child's null input too: the spawn is refused, no child is created
        WorkflowHandle<String> parent = engine.start("spawnsNull", "sn-p", "x", String.class);
        assertThatThrownBy(() -> parent.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining("input of workflow order/sn-p.c is null");
        assertThat(engine.describe("order", "sn-p.c")).isEmpty();
    }

    @Test
    void a_step_result_that_cannot_be_journaled_fails_the_workflow_at_once_without_running_the_action_again() {
        WorkflowHandle<String> h = engine.start("badResult", "br-1", "x", String.class);
        // before: crashed on every attempt, the action (its side effect) running each time, 3 in all
        assertThatThrownBy(() -> h.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining("step 'receipt' of workflow badResult/br-1 returned a java.lang.Object")
                .hasMessageContaining("cannot serialize java.lang.Object");
        assertThat(effects.count("br-1:receipt")).isEqualTo(1);
        assertThat(h.info().attempts()).isEqualTo(1);
        assertThat(engine.describe("badResult", "br-1").orElseThrow().journal())
                .extracting(JournalEntry::type).containsExactly("WorkflowStarted", "WorkflowFailed");
    }

    @Test
    void a_long_id_or_value_shortened_in_a_message_keeps_its_characters_whole() {
        // 39 characters, then emoji (two UTF-16 units each): the 40-unit cut fell inside one. The
        // longest name leaves the id 396 bytes; this one is 39 * 3 + 80 * 4 = 437 (199 characters)
        String id = "\u8D26".repeat(39) + "\uD83D\uDE00".repeat(80);
        assertThatThrownBy(() -> engine.start("n".repeat(WorkflowNames.MAX_NAME), id, "x", String.class))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("the event store's limit is 512")
                .satisfies(
                        e -> assertThat(lone(e.getMessage())).as("a lone surrogate in: " + e.getMessage()).isFalse());
        // 116 characters of JSON, then an emoji: the 117-unit cut fell inside it
        String json = "\"" + "j".repeat(115) + "\uD83D\uDE00".repeat(10) + "\"";
        assertThatThrownBy(() -> WorkflowCodec.jackson().decode(json, Integer.class))
                .isInstanceOf(StepDecodeException.class)
                .satisfies(
                        e -> assertThat(lone(e.getMessage())).as("a lone surrogate in: " + e.getMessage()).isFalse());
    }

    private static boolean lone(String s) {
        return dev.waymark.store.plumbing.Utf16.loneSurrogate(s) >= 0;
    }
}
