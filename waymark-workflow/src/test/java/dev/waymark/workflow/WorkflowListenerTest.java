package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.status.WorkflowOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link WorkflowListener#of}: a listener that throws never keeps the others from a callback. */
class WorkflowListenerTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    /** Records every callback as text; then throws {@code error}, if any. */
    private record Recording(Queue<String> seen, RuntimeException error) implements WorkflowListener {
        Recording() {
            this(new ConcurrentLinkedQueue<>(), null);
        }

        @Override
        public void runStarted(String name, String id) {
            hear("started " + id);
        }

        @Override
        public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error,
                Duration elapsed) {
            hear("finished " + id + " " + outcome.getClass().getSimpleName());
        }

        @Override
        public void stepExecuted(String name, String step, Duration elapsed) {
            hear("executed " + step);
        }

        @Override
        public void stepReplayed(String name, String step) {
            hear("replayed " + step);
        }

        private void hear(String callback) {
            seen.add(callback);
            if (error != null) {
                throw error;
            }
        }
    }

    @Test
    void a_listener_that_throws_from_every_callback_does_not_keep_the_next_one_from_any() throws Exception {
        Recording throwing = new Recording(new ConcurrentLinkedQueue<>(), new IllegalStateException("metrics down"));
        Recording recording = new Recording();
        WorkflowRegistry registry = new WorkflowRegistry().register("signed", String.class, String.class,
                (ctx, in) -> ctx.step("a", String.class, () -> "A") + ctx.awakeable("sign", String.class).await());
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build();
                WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry)
                        .listener(WorkflowListener.of(throwing, recording)).build()) {
            WorkflowHandle<String> h = engine.start("signed", "s-1", "x", String.class);
            UUID sign = await().atMost(WAIT).until(() -> engine.describe("signed", "s-1")
                    .flatMap(d -> d.awakeables().stream().findFirst()).map(AwakeableInfo::id).orElse(null),
                    java.util.Objects::nonNull);
            await().atMost(WAIT).until(() -> throwing.seen().contains("finished s-1 Suspended"));
            assertThat(engine.completeAwakeable(sign, "B")).isEqualTo(AwakeableOutcome.SETTLED);
            assertThat(h.await(WAIT)).isEqualTo("AB");
            await().atMost(WAIT).until(() -> throwing.seen().contains("finished s-1 Completed"));
        }
        List<String> expected = List.of("started s-1", "executed a", "executed awkid:sign", "finished s-1 Suspended",
                "started s-1", "replayed a", "replayed awkid:sign", "finished s-1 Completed");
        assertThat(throwing.seen()).containsExactlyElementsOf(expected);
        // before: the first listener's exception ended the loop, and the second heard nothing
        assertThat(recording.seen()).containsExactlyElementsOf(expected);
    }

    @Test
    void a_missing_class_or_a_failed_assertion_in_one_listener_is_contained_too() {
        Recording recording = new Recording();
        WorkflowListener broken = new WorkflowListener() {
            @Override
            public void runStarted(String name, String id) {
                throw new NoClassDefFoundError("io/opentelemetry/api/trace/Span");
            }

            @Override
            public void stepReplayed(String name, String step) {
                throw new AssertionError("replayed " + step);
            }
        };
        WorkflowListener both = WorkflowListener.of(broken, recording);
        both.runStarted("w", "1");
        both.stepReplayed("w", "a");
        both.stepReplayed("w", "b");
        assertThat(recording.seen()).containsExactly("started 1", "replayed a", "replayed b");
    }
}
