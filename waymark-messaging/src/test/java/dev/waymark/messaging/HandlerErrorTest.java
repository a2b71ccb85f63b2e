package dev.waymark.messaging;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * A handler or listener that throws an {@code Error}: the handler's own (assertion, linkage, stack
 * overflow) is a retry like an exception, a fatal one fails the processor; neither ends it silently.
 */
class HandlerErrorTest {

    private static InMemorySource source(String name, int messages) {
        InMemorySource source = new InMemorySource(name);
        for (int i = 0; i < messages; i++) {
            source.send("k" + (i % 2), Integer.toString(i));
        }
        return source;
    }

    private static long finalized(InMemorySource s, Class<? extends AckDecision> type) {
        return s.decisions().stream().filter(d -> type.isInstance(d.decision())).count();
    }

    /** A handler that throws {@code error} on the first delivery of message {@code id}. */
    private static Handler throwingOnce(String id, Error error) {
        Set<String> thrown = ConcurrentHashMap.newKeySet();
        return m -> {
            if (m.id().equals(id) && thrown.add(id)) {
                throw error;
            }
            return AckDecision.ok();
        };
    }

    @Test
    void a_handlers_own_error_is_a_retry_in_every_concurrency_mode_and_the_processors_keep_going()
            throws Exception {
        InMemorySource serial = source("serial", 5);
        InMemorySource unordered = source("unordered", 5);
        InMemorySource keyed = source("keyed", 5);
        ProcessingApp app = ProcessingApp.builder()
                .processor("serial", serial, Concurrency.serial(), throwingOnce("serial-2", new AssertionError("bug")))
                .processor("unordered", unordered, Concurrency.unordered(4),
                        throwingOnce("unordered-2", new StackOverflowError()))
                .processor("keyed", keyed, Concurrency.orderedByKey(2),
                        throwingOnce("keyed-2", new NoClassDefFoundError("com/example/Missing")))
                .build().start();
        for (InMemorySource s : new InMemorySource[]{serial, unordered, keyed}) {
            await().atMost(WAIT).until(() -> finalized(s, AckDecision.Ok.class) == 5);
            assertThat(s.decisions()).filteredOn(d -> d.decision() instanceof AckDecision.Retry).singleElement()
                    .satisfies(d -> assertThat(d.messageId()).isEqualTo(s.name() + "-2"));
        }
        assertThat(app.snapshot()).containsOnlyKeys("serial", "unordered", "keyed");
        app.snapshot().values().forEach(state -> {
            assertThat(state.lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
            assertThat(state.failed()).isOne();
            assertThat(state.inFlight()).isZero();
        });
        assertThat(app.isHealthy()).isTrue();
        assertThat(app.stop(Duration.ofSeconds(5), Duration.ofSeconds(10))).as("drains: nothing held").isTrue();
    }

    @Test
    void a_fatal_error_fails_the_processor_and_a_keyed_one_still_drains() throws Exception {
        InMemorySource serial = source("serial", 3);
        InMemorySource keyed = source("keyed", 6);
        ProcessingApp app = ProcessingApp.builder()
                .processor("serial", serial, Concurrency.serial(),
                        throwingOnce("serial-2", new OutOfMemoryError("test")))
                .processor("keyed", keyed, Concurrency.orderedByKey(2),
                        throwingOnce("keyed-1", new OutOfMemoryError("test")))
                .build().start();
        assertThat(app.awaitTermination(WAIT)).as("both end; the keyed chain was released").isTrue();
        assertThat(app.snapshot()).containsOnlyKeys("serial", "keyed");
        app.snapshot().values().forEach(state -> {
            assertThat(state.lifecycle()).isEqualTo(ProcessorState.Lifecycle.FAILED);
            assertThat(state.failure()).contains("OutOfMemoryError");
            assertThat(state.failedMessageId()).isEqualTo(state.id() + (state.id().equals("serial") ? "-2" : "-1"));
        });
        assertThat(app.isHealthy()).isFalse();
        assertThat(serial.decisions()).extracting(InMemorySource.Finalized::messageId).containsExactly("serial-1");
        assertThat(keyed.decisions()).extracting(InMemorySource.Finalized::messageId).doesNotContain("keyed-1");
        assertThat(app.stop(Duration.ofSeconds(5), Duration.ofSeconds(10))).isTrue();
    }

    @Test
    void a_listener_that_throws_a_linkage_or_assertion_error_is_ignored() throws Exception {
        InMemorySource s = source("s", 4);
        ProcessingApp app = ProcessingApp.builder()
                .listener((processorId, message, decision, nanos, error) -> {
                    throw message.id().equals("s-1")
                            ? new NoClassDefFoundError("io/micrometer/core/instrument/Timer")
                            : new AssertionError("listener bug");
                })
                .processor("p", s, Concurrency.serial(), m -> AckDecision.ok())
                .build().start();
        await().atMost(WAIT).until(() -> finalized(s, AckDecision.Ok.class) == 4);
        assertThat(app.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
        assertThat(app.snapshot().get("p").processed()).isEqualTo(4);
        assertThat(app.stop()).isTrue();
    }
}
