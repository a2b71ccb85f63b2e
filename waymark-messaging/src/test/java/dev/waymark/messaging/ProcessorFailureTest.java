package dev.waymark.messaging;

import dev.waymark.core.WaymarkInputException;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The typed failure of a processor, readable under ISOLATE (where awaitTermination reports nothing). */
class ProcessorFailureTest {

    private static InMemorySource source(String name, int messages) {
        InMemorySource source = new InMemorySource(name);
        for (int i = 0; i < messages; i++) {
            source.send("k", Integer.toString(i));
        }
        return source;
    }

    @Test
    void under_isolate_a_failed_processors_typed_failure_carries_the_sources_exception_as_thrown() throws Exception {
        InMemorySource failing = source("failing", 3);
        InMemorySource good = source("good", 3);
        ProcessingApp app = ProcessingApp.builder()
                .processor("failing", TestSources.failingAfter(failing, 1, new CountDownLatch(1)), Concurrency.serial(),
                        m -> AckDecision.ok())
                .processor("good", good, Concurrency.serial(), m -> AckDecision.ok())
                .build().start();
        await().atMost(WAIT).until(() -> app.snapshot("failing").lifecycle() == ProcessorState.Lifecycle.FAILED);
        ProcessorFailedException failure = app.failure("failing").orElseThrow();
        assertThat(failure.processorId()).isEqualTo("failing");
        assertThat(failure.getCause()).isExactlyInstanceOf(IllegalStateException.class)
                .hasMessage("connection reset by broker");
        assertThat(app.snapshot("failing").failure()).isEqualTo(failure.getMessage());
        assertThat(app.failure("good")).isEmpty();
        assertThat(app.stop()).isTrue();
        assertThat(app.awaitTermination(WAIT)).isTrue(); // ISOLATE reports nothing here: the accessor does
        assertThatThrownBy(() -> app.failure("nope")).isInstanceOf(WaymarkInputException.class)
                .hasMessageContaining("[failing, good]");
    }

    @Test
    void an_acknowledgement_that_keeps_failing_is_the_cause_with_the_message_id() throws Exception {
        InMemorySource bad = source("bad", 2);
        ProcessingApp app = ProcessingApp.builder()
                .processor("bad", TestSources.failingAcks(bad, new AtomicInteger(), n -> true), Concurrency.serial(),
                        m -> AckDecision.ok())
                .build().start();
        await().atMost(WAIT).until(() -> app.failure("bad").isPresent()
                && app.snapshot("bad").lifecycle() == ProcessorState.Lifecycle.FAILED);
        ProcessorFailedException failure = app.failure("bad").orElseThrow();
        assertThat(failure.messageId()).isEqualTo("bad-1");
        assertThat(failure.getCause()).isInstanceOf(IllegalStateException.class).hasMessage("broker unavailable");
        app.stop();
    }
}
