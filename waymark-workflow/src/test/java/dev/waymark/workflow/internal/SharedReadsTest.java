package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Reads shared by concurrent callers: each gets its own answer, callers that wait share one read. */
class SharedReadsTest {

    @Test
    void callers_arriving_during_a_read_share_the_next_one_and_each_gets_its_own_answer() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<List<Integer>> reads = new CopyOnWriteArrayList<>();
        SharedReads<Integer, String> shared = new SharedReads<>(keys -> {
            reads.add(List.copyOf(keys));
            if (reads.size() == 1) {
                block(release);
            }
            return keys.stream().map(k -> "v" + k).toList();
        }, 1_000);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<String> first = threads.submit(() -> shared.get(0));
            await().atMost(Duration.ofSeconds(10)).until(() -> reads.size() == 1);
            List<Future<String>> others = new ArrayList<>();
            for (int i = 1; i <= 20; i++) {
                int k = i;
                others.add(threads.submit(() -> shared.get(k)));
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> shared.pending() == 20);
            release.countDown();
            assertThat(first.get()).isEqualTo("v0");
            for (int i = 1; i <= 20; i++) {
                assertThat(others.get(i - 1).get()).isEqualTo("v" + i);
            }
        }
        assertThat(reads).hasSize(2);
        assertThat(reads.get(0)).containsExactly(0);
        assertThat(reads.get(1)).hasSize(20); // the twenty waiting callers: one read, led by one of them
        assertThat(shared.pending()).isZero();
    }

    @Test
    void many_callers_always_get_their_own_answer() throws Exception {
        SharedReads<Integer, Integer> shared = new SharedReads<>(keys -> keys.stream().map(k -> k * 2).toList(), 7);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> answers = new ArrayList<>();
            for (int i = 0; i < 5_000; i++) {
                int k = i;
                answers.add(threads.submit(() -> shared.get(k)));
            }
            for (int i = 0; i < answers.size(); i++) {
                assertThat(answers.get(i).get()).isEqualTo(i * 2);
            }
        }
    }

    @Test
    void a_failed_read_fails_its_callers_only_and_the_next_read_goes_on() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        List<List<String>> reads = new CopyOnWriteArrayList<>();
        SharedReads<String, String> shared = new SharedReads<>(keys -> {
            reads.add(List.copyOf(keys));
            if (reads.size() == 1) {
                block(release);
                throw new IllegalStateException("read failed");
            }
            return keys;
        }, 1_000);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<String> first = threads.submit(() -> shared.get("a"));
            await().atMost(Duration.ofSeconds(10)).until(() -> reads.size() == 1);
            Future<String> second = threads.submit(() -> shared.get("b"));
            await().atMost(Duration.ofSeconds(10)).until(() -> shared.pending() == 1);
            release.countDown();
            assertThatThrownBy(first::get).hasCauseInstanceOf(IllegalStateException.class)
                    .hasRootCauseMessage("read failed");
            assertThat(second.get()).isEqualTo("b");
        }
    }

    private static void block(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
