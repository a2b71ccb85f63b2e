package dev.waymark.messaging.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Once {@code close()} returns, no finalizer is inside the gate and none gets in. */
class FinalizeGateTest {

    @Test
    void single_thread_gate_lets_nothing_finalize_after_close_returns() throws Exception {
        raceCloseAgainstFinalizers(FinalizeGate::singleThread, 1);
    }

    @Test
    void many_threads_gate_lets_nothing_finalize_after_close_returns() throws Exception {
        raceCloseAgainstFinalizers(FinalizeGate::manyThreads, 4);
    }

    @Test
    void close_waits_for_a_finalizer_inside() throws Exception {
        FinalizeGate gate = FinalizeGate.singleThread();
        assertThat(gate.enter()).isTrue();
        CountDownLatch closed = new CountDownLatch(1);
        Thread closer = Thread.ofPlatform().start(() -> {
            gate.close();
            closed.countDown();
        });
        assertThat(closed.await(200, TimeUnit.MILLISECONDS)).isFalse(); // still inside
        gate.exit();
        assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();
        closer.join();
        assertThat(gate.enter()).isFalse();
    }

    /**
     * Finalizer threads count their finalizations inside the gate while another thread closes it;
     * the count seen when close returns must be final.
     */
    private static void raceCloseAgainstFinalizers(Supplier<FinalizeGate> gates, int finalizers) throws Exception {
        for (int round = 0; round < 300; round++) {
            FinalizeGate gate = gates.get();
            AtomicLong inside = new AtomicLong();
            AtomicLong finalized = new AtomicLong();
            Thread[] threads = new Thread[finalizers];
            for (int t = 0; t < finalizers; t++) {
                threads[t] = Thread.ofPlatform().start(() -> {
                    while (gate.enter()) {
                        inside.incrementAndGet();
                        finalized.incrementAndGet();
                        inside.decrementAndGet();
                        gate.exit();
                    }
                });
            }
            while (finalized.get() < round % 50) {
                Thread.onSpinWait(); // let the finalizers get going, a different amount each round
            }
            gate.close();
            long atClose = finalized.get();
            assertThat(inside.get()).as("finalizers inside after close, round %d", round).isZero();
            for (Thread t : threads) {
                t.join(10_000);
                assertThat(t.isAlive()).isFalse();
            }
            assertThat(finalized.get()).as("finalizations after close, round %d", round).isEqualTo(atClose);
        }
    }
}
