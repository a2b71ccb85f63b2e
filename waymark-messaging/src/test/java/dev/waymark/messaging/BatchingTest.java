package dev.waymark.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.messaging.batch.BatchAck;
import dev.waymark.messaging.batch.BatchInfo;
import dev.waymark.messaging.batch.Batching;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class BatchingTest {

    @Test
    void batches_close_by_size_or_timeout_per_key_and_each_message_gets_its_own_decision() throws Exception {
        InMemorySource source = new InMemorySource("s");
        for (int i = 0; i < 10; i++) {
            source.send(i < 8 ? "a" : "b", Integer.toString(i));
        }
        List<BatchInfo> batches = new CopyOnWriteArrayList<>();
        List<String> misplaced = new CopyOnWriteArrayList<>(); // asserted after: a throw here would be a retry
        try (Batching batching = Batching.of(4, Duration.ofMillis(300), e -> e.orderingKey().asUtf8(),
                (info, messages) -> {
                    batches.add(info);
                    messages.stream().filter(m -> !Objects.equals(info.key(), m.envelope().orderingKey().asUtf8()))
                            .forEach(m -> misplaced.add(m.id() + " in the batch of " + info.key()));
                    return BatchAck.except(Map.of("s-2", AckDecision.deadLetter(DeadLetterReason.invalid("x"))),
                            AckDecision.ok());
                })) {
            ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.unordered(8), batching)
                    .build().start();
            await().atMost(Duration.ofSeconds(10)).until(() -> source.decisions().size() == 10);
            app.stop();
        }
        assertThat(misplaced).isEmpty();
        assertThat(batches).filteredOn(b -> b.key().equals("a")).extracting(BatchInfo::size).containsExactly(4, 4);
        assertThat(batches).filteredOn(b -> b.key().equals("b")).singleElement()
                .satisfies(b -> assertThat(b.trigger()).isEqualTo(BatchInfo.Trigger.TIMEOUT));
        assertThat(source.decisions()).filteredOn(d -> d.decision() instanceof AckDecision.DeadLetter)
                .extracting(InMemorySource.Finalized::messageId).containsExactly("s-2");
    }

    @Test
    void a_failing_batch_retries_each_of_its_messages_and_bad_settings_are_refused() throws Exception {
        assertThat(attemptsWhenTheFirstBatchThrows(new IllegalStateException("bulk insert failed"), app -> {}))
                .containsExactly(0, 0, 1, 1);
        assertThatThrownBy(() -> Batching.of(0, Duration.ofSeconds(1), null, (i, m) -> BatchAck.allOk()))
                .hasMessage("batch size must be >= 1, got 0");
        assertThatThrownBy(() -> Batching.of(1, Duration.ZERO, null, (i, m) -> BatchAck.allOk()))
                .hasMessageContaining("batch timeout must be > 0");
        try (Batching tooBig = Batching.of(10, Duration.ofSeconds(1), null, (i, m) -> BatchAck.allOk())) {
            assertThatThrownBy(() -> ProcessingApp.builder()
                    .processor("p", new InMemorySource("x"), Concurrency.serial(), tooBig).build())
                    .isInstanceOf(MessagingConfigException.class).hasMessageContaining("batches 10 messages");
        }
    }

    @Test
    void an_error_thrown_by_the_batch_handler_retries_each_of_its_messages_instead_of_leaving_them_waiting()
            throws Exception {
        assertThat(attemptsWhenTheFirstBatchThrows(new AssertionError("batch handler bug"),
                app -> assertThat(app.snapshot().get("p").failed()).isEqualTo(2))).containsExactly(0, 0, 1, 1);
    }

    /**
     * Two messages in one batch whose handler throws {@code failure} on the first attempt; returns
     * the attempts the handler saw once both are acknowledged and the app stopped ({@code check} runs
     * before the stop).
     */
    private static List<Integer> attemptsWhenTheFirstBatchThrows(Throwable failure,
            java.util.function.Consumer<ProcessingApp> check) throws Exception {
        InMemorySource source = new InMemorySource("s");
        source.send("a", "1");
        source.send("a", "2");
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        try (Batching batching = Batching.of(2, Duration.ofSeconds(5), null, (info, messages) -> {
            messages.forEach(m -> attempts.add(m.envelope().attempt()));
            if (messages.get(0).envelope().attempt() == 0) {
                if (failure instanceof Error e) {
                    throw e;
                }
                throw (RuntimeException) failure;
            }
            return BatchAck.allOk();
        })) {
            ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.unordered(4), batching)
                    .build().start();
            await().atMost(Duration.ofSeconds(10)).until(() -> source.decisions().stream()
                    .filter(d -> d.decision() instanceof AckDecision.Ok).count() == 2);
            check.accept(app);
            assertThat(app.stop(Duration.ofSeconds(5), Duration.ofSeconds(10))).isTrue(); // nothing left waiting
        }
        return attempts;
    }
}
