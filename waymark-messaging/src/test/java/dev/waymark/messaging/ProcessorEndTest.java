package dev.waymark.messaging;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.messaging.batch.BatchAck;
import dev.waymark.messaging.batch.Batching;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What a processor does once it has ended (halt, failure) with messages still queued behind a key,
 * and combinations of handler and concurrency that could never work, refused when the app is built.
 */
class ProcessorEndTest {

    private static String text(Message m) {
        return new String(m.payload(), StandardCharsets.UTF_8);
    }

    @Test
    void a_message_queued_behind_its_keys_halted_one_is_not_handled_or_acknowledged() throws Exception {
        InMemorySource s = new InMemorySource("keyed");
        s.send("k", "1");
        s.send("k", "2");
        AtomicReference<ProcessingApp> app = new AtomicReference<>();
        List<String> handled = new CopyOnWriteArrayList<>();
        ProcessingApp started = ProcessingApp.builder().processor("p", s, Concurrency.orderedByKey(2), m -> {
            handled.add(text(m));
            if (text(m).equals("1")) {
                // wait until "2" has left the inbox: it is queued behind "1" in the key's chain
                await().atMost(WAIT).until(() -> app.get() != null && app.get().snapshot().get("p").received() == 2
                        && app.get().snapshot().get("p").inboxDepth() == 0);
                return AckDecision.halt("cannot go on");
            }
            return AckDecision.ok();
        }).build();
        app.set(started);
        started.start();
        assertThat(started.awaitTermination(WAIT)).isTrue();
        // before: the key's chain went on after the halt and acknowledged "2" (Ok) although "1" never was
        assertThat(started.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.HALTED);
        assertThat(handled).containsExactly("1");
        assertThat(s.decisions()).singleElement()
                .satisfies(f -> assertThat(f.decision()).isInstanceOf(AckDecision.Halt.class));
        started.stop();
    }

    @Test
    void batching_under_a_keyed_or_serial_order_is_refused_when_the_app_is_built() {
        InMemorySource s = new InMemorySource("batched");
        try (Batching batching = Batching.of(2, Duration.ofMillis(100), null, (info, messages) -> BatchAck.allOk())) {
            // under a keyed order a key's messages wait for each other: every batch would close by its timeout
            assertThatThrownBy(() -> ProcessingApp.builder().processor("p", s, Concurrency.orderedByKey(4), batching)
                    .build()).isInstanceOf(MessagingConfigException.class)
                    .hasMessageContaining("batches 2 messages but runs orderedByKey(4); use Concurrency.unordered(n)");
            assertThatThrownBy(() -> ProcessingApp.builder().processor("p", s, Concurrency.serial(), batching)
                    .build()).isInstanceOf(MessagingConfigException.class)
                    .hasMessageContaining("batches 2 messages but runs serial()");
            assertThat(ProcessingApp.builder().processor("p", s, Concurrency.unordered(2), batching).build())
                    .isNotNull();
        }
        assertThat(s.pulled()).isZero();
    }

    @Test
    void a_completed_in_memory_source_still_redelivers_what_a_concurrent_processor_retries() throws Exception {
        InMemorySource s = new InMemorySource("retried");
        s.send("k", "only");
        s.complete(); // no more sends: the retry below must still come back
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.unordered(2),
                m -> m.envelope().attempt() == 0 ? AckDecision.retry(Duration.ofMillis(50)) : AckDecision.ok())
                .build().start();
        // before: the retry was dropped once complete() had been called, and the processor ended
        assertThat(app.awaitTermination(WAIT)).isTrue();
        assertThat(s.decisions()).extracting(f -> f.decision().getClass().getSimpleName()).containsExactly("Retry",
                "Ok");
        app.stop();
    }
}
