package dev.waymark.messaging;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link MessageSource} adapter passes; each adapter's test extends it with a
 * fixture. (It lives in this module's tests rather than the testkit: the testkit would then depend
 * on messaging while messaging's tests depend on the testkit.)
 */
public abstract class MessageSourceContract {

    /** One adapter instance holding {@code messages} messages. */
    public interface Fixture extends AutoCloseable {
        /** The source under test. */
        MessageSource source();

        /** The ids of the messages, in source order. */
        List<String> expectedIds();

        /** Whether every message is acknowledged at the source (committed, checkpointed). */
        boolean allAcknowledged() throws Exception;

        @Override
        void close() throws Exception;
    }

    /** A fresh fixture with {@code messages} messages. */
    protected abstract Fixture fixture(int messages) throws Exception;

    @Test
    void delivers_each_message_once_in_order_and_acknowledges_it() throws Exception {
        try (Fixture f = fixture(10)) {
            List<String> seen = new CopyOnWriteArrayList<>();
            ProcessingApp app = ProcessingApp.builder().processor("contract", f.source(), Concurrency.serial(), m -> {
                seen.add(m.id());
                return AckDecision.ok();
            }).build().start();
            await().atMost(WAIT).until(() -> seen.size() == 10 && f.allAcknowledged());
            assertThat(app.stop()).isTrue();
            assertThat(seen).containsExactlyElementsOf(f.expectedIds());
        }
    }

    @Test
    void a_retry_redelivers_the_same_message_with_a_higher_attempt() throws Exception {
        try (Fixture f = fixture(2)) {
            List<Integer> attemptsOfFirst = new CopyOnWriteArrayList<>();
            AtomicBoolean retried = new AtomicBoolean();
            String first = f.expectedIds().get(0);
            ProcessingApp app = ProcessingApp.builder().processor("contract", f.source(), Concurrency.serial(), m -> {
                if (m.id().equals(first)) {
                    attemptsOfFirst.add(m.envelope().attempt());
                    if (retried.compareAndSet(false, true)) {
                        return AckDecision.retry(Duration.ZERO);
                    }
                }
                return AckDecision.ok();
            }).build().start();
            await().atMost(WAIT).until(() -> attemptsOfFirst.size() == 2 && f.allAcknowledged());
            app.stop();
            assertThat(attemptsOfFirst).containsExactly(0, 1);
        }
    }

    @Test
    void finalizing_twice_with_the_same_decision_is_harmless() throws Exception {
        try (Fixture f = fixture(1)) {
            Optional<Ingested> one = Optional.empty();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (one.isEmpty() && System.nanoTime() < deadline) {
                one = f.source().poll(Duration.ofMillis(200));
            }
            assertThat(one).isPresent();
            one.get().ack().finalize(AckDecision.ok());
            one.get().ack().finalize(AckDecision.ok());
            await().atMost(WAIT).until(f::allAcknowledged);
            f.source().shutdown();
            await().atMost(WAIT).until(() -> f.source().isFinished());
        }
    }
}
