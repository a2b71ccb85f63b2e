package dev.waymark.messaging;

import dev.waymark.core.WaymarkInputException;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.core.RetryPolicy;
import dev.waymark.core.Stoppable;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The runtime's behaviour (reference checklist items 1-9) against the in-memory adapter. */
class ProcessingAppTest {

    private static InMemorySource source(String name, int messages) {
        InMemorySource source = new InMemorySource(name);
        for (int i = 0; i < messages; i++) {
            source.send("k" + (i % 4), Integer.toString(i));
        }
        return source;
    }

    private static String text(Message m) {
        return new String(m.payload(), StandardCharsets.UTF_8);
    }

    private static long finalized(InMemorySource s, Class<? extends AckDecision> type) {
        return s.decisions().stream().filter(d -> type.isInstance(d.decision())).count();
    }

    // 1 ---------------------------------------------------------------------------------------

    @Test
    void invalid_configuration_is_refused_before_any_source_is_touched() {
        InMemorySource a = source("a", 3);
        InMemorySource b = source("b", 3);
        Handler ok = m -> AckDecision.ok();
        assertThatThrownBy(
                () -> ProcessingApp.builder().inboxSize(0).processor("p", a, Concurrency.serial(), ok).build())
                .isInstanceOf(MessagingConfigException.class).hasMessage("inboxSize must be >= 1, got 0");
        assertThatThrownBy(() -> ProcessingApp.builder().processor("p", a, Concurrency.serial(), ok)
                .processor("p", b, Concurrency.serial(), ok).build()).hasMessageContaining("'p' is used twice");
        assertThatThrownBy(() -> ProcessingApp.builder().processor("p", a, Concurrency.serial(), ok)
                .processor("q", a, Concurrency.serial(), ok).build()).hasMessageContaining("share one source");
        assertThatThrownBy(() -> Concurrency.unordered(0)).hasMessageContaining("between 1 and 10000, got 0");
        assertThatThrownBy(() -> Concurrency.orderedByKey(20_000)).hasMessageContaining("got 20000");
        assertThatThrownBy(() -> ProcessingApp.builder().build()).hasMessageContaining("at least one processor");
        assertThatThrownBy(() -> ProcessingApp.builder().processor(" ", a, Concurrency.serial(), ok).build())
                .hasMessageContaining("id must not be blank");
        assertThat(a.pulled() + b.pulled()).isZero();
        assertThat(a.shutdowns() + b.shutdowns()).isZero();
    }

    // 2 ---------------------------------------------------------------------------------------

    @Test
    void a_handler_exception_is_finalized_once_as_a_retry_and_the_processor_keeps_going() throws Exception {
        InMemorySource s = source("s", 5);
        AtomicInteger calls = new AtomicInteger();
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.serial(), m -> {
            if (calls.incrementAndGet() == 2) {
                throw new IllegalStateException("transient");
            }
            return AckDecision.ok();
        }).build().start();
        await().atMost(WAIT).until(() -> finalized(s, AckDecision.Ok.class) == 5);
        assertThat(s.decisions()).filteredOn(d -> d.decision() instanceof AckDecision.Retry).singleElement()
                .satisfies(d -> assertThat(d.decision())
                        .isEqualTo(AckDecision.retry(ProcessingApp.DEFAULT_RETRY.initialDelay())));
        ProcessorState state = app.snapshot().get("p");
        assertThat(state.failed()).isOne();
        assertThat(state.lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
        assertThat(app.snapshot("p")).extracting(ProcessorState::id, ProcessorState::failed).containsExactly("p", 1L);
        assertThatThrownBy(() -> app.snapshot("q")).isInstanceOf(WaymarkInputException.class)
                .hasMessage("no processor with id q in this app; its processors are [p]");
        assertThat(app.stop()).isTrue();
    }

    @Test
    void a_bounded_retry_policy_dead_letters_a_message_whose_handler_keeps_throwing() throws Exception {
        InMemorySource s = source("s", 2);
        AtomicInteger calls = new AtomicInteger();
        ProcessingApp app = ProcessingApp.builder()
                .retry(RetryPolicy.exponential(3, Duration.ofMillis(10), Duration.ofMillis(20)))
                .processor("p", s, Concurrency.serial(), m -> {
                    if (text(m).equals("0")) {
                        calls.incrementAndGet();
                        throw new IllegalStateException("cannot parse " + m.id());
                    }
                    return AckDecision.ok();
                }).build().start();
        await().atMost(WAIT).until(() -> finalized(s, AckDecision.DeadLetter.class) == 1
                && finalized(s, AckDecision.Ok.class) == 1);
        assertThat(calls).hasValue(3);
        assertThat(s.decisions()).filteredOn(d -> !(d.decision() instanceof AckDecision.Ok))
                .extracting(d -> d.decision())
                .containsExactly(AckDecision.retry(Duration.ofMillis(10)), AckDecision.retry(Duration.ofMillis(20)),
                        AckDecision.deadLetter(DeadLetterReason.maxAttempts(3)));
        ProcessorState state = app.snapshot("p");
        assertThat(state.failed()).as("three handler exceptions and a dead letter").isEqualTo(4);
        assertThat(state.deadLettered()).isOne();
        assertThat(app.stop(Duration.ofSeconds(5))).isTrue();
        assertThatThrownBy(() -> ProcessingApp.builder().retry(null).processor("q", source("q", 0),
                Concurrency.serial(), m -> AckDecision.ok()).build()).isInstanceOf(MessagingConfigException.class)
                .hasMessage("retry must not be null");
    }

    @Test
    void an_app_is_stoppable_and_closes_in_try_with_resources() throws Exception {
        InMemorySource s = source("s", 3);
        ProcessingApp closed;
        try (ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.serial(), m -> AckDecision.ok())
                .build().start()) {
            closed = app;
            await().atMost(WAIT).until(() -> finalized(s, AckDecision.Ok.class) == 3);
        }
        assertThat(closed.snapshot("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.STOPPED);
        assertThat(s.shutdowns()).isOne();
        Stoppable stoppable = closed;
        assertThat(stoppable.stop(Duration.ZERO)).as("a later call shares the first result").isTrue();
        assertThatThrownBy(() -> stoppable.stop(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be >= 0");
    }

    // 3, 4 ------------------------------------------------------------------------------------

    @Test
    void finalization_is_retried_with_the_same_decision() throws Exception {
        InMemorySource s = source("s", 1);
        AtomicInteger calls = new AtomicInteger();
        ProcessingApp app = ProcessingApp.builder()
                .processor("p", TestSources.failingAcks(s, calls, n -> n <= 2), Concurrency.serial(),
                        m -> AckDecision.deadLetter(DeadLetterReason.invalid("bad")))
                .build().start();
        await().atMost(WAIT).until(() -> s.decisions().size() == 1);
        assertThat(calls).hasValue(3);
        assertThat(s.decisions().get(0).decision()).isEqualTo(AckDecision.deadLetter(DeadLetterReason.invalid("bad")));
        assertThat(app.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
        app.stop();
    }

    @Test
    void exhausted_finalization_fails_the_processor_and_isolated_siblings_go_on() throws Exception {
        InMemorySource bad = source("bad", 3);
        InMemorySource good = source("good", 3);
        ProcessingApp app = ProcessingApp.builder()
                .processor("bad", TestSources.failingAcks(bad, new AtomicInteger(), n -> true), Concurrency.serial(),
                        m -> AckDecision.ok())
                .processor("good", good, Concurrency.serial(), m -> AckDecision.ok())
                .build().start();
        await().atMost(WAIT).until(() -> app.snapshot().get("bad").lifecycle() == ProcessorState.Lifecycle.FAILED);
        ProcessorState failed = app.snapshot().get("bad");
        assertThat(failed.failedMessageId()).isEqualTo("bad-1");
        assertThat(failed.failure()).contains("finalization failed after 4 attempts");
        assertThat(app.isHealthy()).isFalse();
        good.send("k", "late");
        await().atMost(WAIT).until(() -> good.decisions().size() == 4);
        assertThat(app.stop()).isTrue();
        assertThat(app.awaitTermination(WAIT)).isTrue(); // ISOLATE: no exception
        assertThat(app.snapshot().get("bad").lifecycle()).isEqualTo(ProcessorState.Lifecycle.FAILED);
    }

    @Test
    void under_stop_all_the_first_failure_stops_every_processor_and_is_reported_once() throws Exception {
        InMemorySource bad = source("bad", 1);
        InMemorySource endless = new InMemorySource("endless");
        ProcessingApp app = ProcessingApp.builder().failureStrategy(FailureStrategy.STOP_ALL)
                .processor("bad", TestSources.failingAcks(bad, new AtomicInteger(), n -> true), Concurrency.serial(),
                        m -> AckDecision.ok())
                .processor("endless", endless, Concurrency.serial(), m -> AckDecision.ok())
                .build().start();
        assertThatThrownBy(() -> app.awaitTermination(WAIT)).isInstanceOf(ProcessorFailedException.class)
                .satisfies(e -> assertThat(((ProcessorFailedException) e).messageId()).isEqualTo("bad-1"));
        assertThat(app.awaitTermination(WAIT)).isTrue(); // reported once
        assertThat(app.snapshot().get("endless").lifecycle()).isEqualTo(ProcessorState.Lifecycle.STOPPED);
        assertThat(endless.shutdowns()).isOne();
    }

    // 5 ---------------------------------------------------------------------------------------

    @Test
    void halt_stops_taking_messages_lets_in_flight_finish_and_siblings_go_on() throws Exception {
        InMemorySource s = source("s", 50);
        InMemorySource sibling = new InMemorySource("sibling");
        CountDownLatch slowStarted = new CountDownLatch(1);
        ProcessingApp app = ProcessingApp.builder().failureStrategy(FailureStrategy.STOP_ALL).inboxSize(10)
                .processor("p", s, Concurrency.unordered(2), m -> {
                    if (text(m).equals("0")) {
                        slowStarted.countDown();
                        new CountDownLatch(1).await(200, TimeUnit.MILLISECONDS); // a slow in-flight handler
                        return AckDecision.ok();
                    }
                    if (text(m).equals("1")) {
                        // Halt only once the slow one is in flight: otherwise it might never have been taken.
                        assertThat(slowStarted.await(10, TimeUnit.SECONDS)).isTrue();
                        return AckDecision.halt("ordering broken");
                    }
                    return AckDecision.ok();
                })
                .processor("sibling", sibling, Concurrency.serial(), m -> AckDecision.ok())
                .build().start();
        await().atMost(WAIT).until(() -> app.snapshot().get("p").lifecycle() == ProcessorState.Lifecycle.HALTED);
        assertThat(s.decisions()).anySatisfy(d -> assertThat(d.decision()).isInstanceOf(AckDecision.Halt.class));
        assertThat(s.decisions()).anySatisfy(d -> assertThat(d.messageId()).isEqualTo("s-1")); // slow one finished
        assertThat(s.decisions().size()).as("messages left in the inbox are not finalized").isLessThan(50);
        assertThat(app.snapshot().get("p").failure()).isEqualTo("ordering broken");
        sibling.send("k", "x");
        await().atMost(WAIT).until(() -> sibling.decisions().size() == 1);
        assertThat(app.isHealthy()).isTrue();
        assertThat(app.stop()).isTrue();
    }

    @Test
    void an_idle_processor_ends_promptly_after_a_halt() throws Exception {
        InMemorySource s = source("s", 1);
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.serial(),
                m -> AckDecision.halt("stop")).build().start();
        // No more messages will come to wake it: it ends by itself, or never (the bound is not the point).
        assertThat(app.awaitTermination(WAIT)).isTrue();
        assertThat(app.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.HALTED);
    }

    // 6 ---------------------------------------------------------------------------------------

    @Test
    void a_blocked_handler_bounds_how_far_the_source_is_read_ahead() throws Exception {
        for (Concurrency c : List.of(Concurrency.serial(), Concurrency.unordered(3), Concurrency.orderedByKey(3))) {
            InMemorySource s = source("s", 500);
            CountDownLatch release = new CountDownLatch(1);
            int inbox = 5;
            ProcessingApp app = ProcessingApp.builder().inboxSize(inbox)
                    .processor("p", s, c, m -> {
                        release.await();
                        return AckDecision.ok();
                    }).build().start();
            int bound = inbox + 3 * c.parallelism() + 1; // inbox + dispatcher buffer + in flight + one in hand
            await().atMost(WAIT).until(() -> app.snapshot().get("p").inFlight() == c.parallelism());
            await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> s.pulled() <= bound);
            assertThat(app.snapshot().get("p").received()).as("%s", c).isEqualTo(s.pulled());
            release.countDown();
            await().atMost(WAIT).until(() -> s.decisions().size() == 500);
            app.stop();
        }
    }

    // 7 ---------------------------------------------------------------------------------------

    @Test
    void serial_keeps_source_order() throws Exception {
        InMemorySource s = source("s", 200);
        List<String> seen = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.serial(), m -> {
            seen.add(text(m));
            return AckDecision.ok();
        }).build().start();
        await().atMost(WAIT).until(() -> seen.size() == 200);
        assertThat(seen).containsExactlyElementsOf(
                java.util.stream.IntStream.range(0, 200).mapToObj(Integer::toString).toList());
        assertThat(s.decisions()).extracting(InMemorySource.Finalized::messageId)
                .containsExactlyElementsOf(
                        java.util.stream.IntStream.rangeClosed(1, 200).mapToObj(i -> "s-" + i).toList());
        app.stop();
    }

    @Test
    void unordered_never_exceeds_its_parallelism() throws Exception {
        InMemorySource s = source("s", 200);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.unordered(4), m -> {
            peak.accumulateAndGet(running.incrementAndGet(), Math::max);
            new CountDownLatch(1).await(2, TimeUnit.MILLISECONDS);
            running.decrementAndGet();
            return AckDecision.ok();
        }).build().start();
        await().atMost(WAIT).until(() -> s.decisions().size() == 200);
        assertThat(peak.get()).isBetween(2, 4);
        app.stop();
    }

    @Test
    void ordered_by_key_keeps_each_key_in_order_runs_keys_in_parallel_and_leaves_null_keys_free() throws Exception {
        InMemorySource s = new InMemorySource("s");
        for (int i = 0; i < 400; i++) {
            s.send(i % 10 == 9 ? null : "key-" + (i % 8), Integer.toString(i));
        }
        Map<String, List<Integer>> perKey = new ConcurrentHashMap<>();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger peak = new AtomicInteger();
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.orderedByKey(8), m -> {
            peak.accumulateAndGet(running.incrementAndGet(), Math::max);
            MessageKey key = m.envelope().orderingKey();
            perKey.computeIfAbsent(key == null ? "null" : key.asUtf8(), k -> new CopyOnWriteArrayList<>())
                    .add(Integer.parseInt(text(m)));
            new CountDownLatch(1).await(1, TimeUnit.MILLISECONDS);
            running.decrementAndGet();
            return AckDecision.ok();
        }).build().start();
        await().atMost(WAIT).until(() -> s.decisions().size() == 400);
        perKey.forEach((key, values) -> {
            if (!key.equals("null")) {
                assertThat(values).as(key).isSorted();
            }
        });
        // acknowledgements per key also come in arrival order
        Map<String, List<String>> ackedPerKey = new ConcurrentHashMap<>();
        for (InMemorySource.Finalized f : s.decisions()) {
            int n = Integer.parseInt(f.messageId().substring(2)) - 1;
            if (n % 10 != 9) {
                ackedPerKey.computeIfAbsent("key-" + (n % 8), k -> new ArrayList<>()).add(f.messageId());
            }
        }
        ackedPerKey.values().forEach(
                ids -> assertThat(ids.stream().map(id -> Integer.parseInt(id.substring(2))).toList()).isSorted());
        assertThat(peak.get()).isGreaterThan(1).isLessThanOrEqualTo(8);
        app.stop();
    }

    @Test
    void a_processor_whose_handler_hangs_is_reported_stuck() throws Exception {
        InMemorySource s = source("s", 2);
        CountDownLatch release = new CountDownLatch(1);
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.serial(), m -> {
            release.await();
            return AckDecision.ok();
        }).build().start();
        await().atMost(WAIT).until(() -> app.snapshot().get("p").inFlight() == 1);
        await().atMost(WAIT).until(() -> !app.isHealthy(Duration.ofMillis(200)));
        assertThat(app.isHealthy()).isTrue(); // not stuck for the default five minutes
        release.countDown();
        await().atMost(WAIT).until(() -> s.decisions().size() == 2);
        assertThat(app.isHealthy(Duration.ofMillis(200))).isTrue(); // idle is not stuck
        app.stop();
    }

    @Test
    void a_message_whose_handler_always_throws_makes_its_processor_stuck_while_one_progressing_between_retries_is_not()
            throws Exception {
        // A window far longer than the stalls of a noisy machine, and half the observation of the progressing one.
        Duration window = Duration.ofSeconds(2);
        InMemorySource poison = source("poison", 1);
        ProcessingApp poisoned = ProcessingApp.builder()
                .retry(RetryPolicy.fixed(RetryPolicy.UNLIMITED, Duration.ofMillis(20)))
                .processor("poison", poison, Concurrency.serial(), m -> {
                    throw new IllegalStateException("cannot parse " + m.id());
                }).build().start();
        ProcessingApp progressing = null;
        try {
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> !poisoned.isHealthy(window));
            ProcessorState state = poisoned.snapshot().get("poison");
            assertThat(state.lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
            assertThat(state.retried()).as("retried, never finalized for good").isGreaterThan(5);
            assertThat(finalized(poison, AckDecision.Ok.class)).isZero();

            // every tenth message fails once, then succeeds: retries all along, and progress all along
            // (10,000 messages of at least 1 ms each outlast the observation)
            InMemorySource flaky = source("flaky", 10_000);
            progressing = ProcessingApp.builder().retry(RetryPolicy.fixed(RetryPolicy.UNLIMITED, Duration.ofMillis(20)))
                    .processor("flaky", flaky, Concurrency.serial(), m -> {
                        LockSupport.parkNanos(1_000_000);
                        if (m.envelope().attempt() == 0 && text(m).endsWith("0")) {
                            throw new IllegalStateException("transient");
                        }
                        return AckDecision.ok();
                    }).build().start();
            ProcessingApp app = progressing;
            List<Long> unhealthyAt = new CopyOnWriteArrayList<>(); // any unhealthy sample fails the test
            long observedUntil = System.nanoTime() + Duration.ofSeconds(4).toNanos();
            await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
                if (!app.isHealthy(window)) {
                    unhealthyAt.add(finalized(flaky, AckDecision.Ok.class));
                }
                return System.nanoTime() - observedUntil >= 0; // sampled for 4 s
            });
            assertThat(unhealthyAt).as("unhealthy while progressing (at these counts of finalized messages)")
                    .isEmpty();
            assertThat(progressing.snapshot().get("flaky").retried()).isPositive();
            assertThat(finalized(flaky, AckDecision.Ok.class)).as("still busy: healthy while working")
                    .isBetween(1L, 9_999L);
        } finally {
            poisoned.stop();
            if (progressing != null) {
                progressing.stop();
            }
        }
    }

    // 8 ---------------------------------------------------------------------------------------

    @Test
    void stop_calls_every_shutdown_once_even_when_one_throws_and_concurrent_stops_share_the_result() throws Exception {
        InMemorySource a = source("a", 3);
        InMemorySource b = source("b", 3);
        InMemorySource c = source("c", 3);
        ProcessingApp app = ProcessingApp.builder()
                .processor("a", a, Concurrency.serial(), m -> AckDecision.ok())
                .processor("b", TestSources.failingShutdown(b), Concurrency.serial(), m -> AckDecision.ok())
                .processor("c", c, Concurrency.serial(), m -> AckDecision.ok())
                .build().start();
        ExecutorService callers = Executors.newFixedThreadPool(3);
        try {
            List<Future<Object>> results = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                results.add(callers.submit(() -> {
                    try {
                        return app.stop();
                    } catch (MessagingException e) {
                        return e;
                    }
                }));
            }
            List<Object> outcomes = new ArrayList<>();
            for (Future<Object> f : results) {
                outcomes.add(f.get(30, TimeUnit.SECONDS));
            }
            assertThat(outcomes).allSatisfy(o -> assertThat(o).isInstanceOf(MessagingException.class)
                    .satisfies(e -> assertThat(((Exception) e).getMessage()).contains("source 'b'")));
            assertThat(outcomes.stream().distinct().count()).isOne();
        } finally {
            callers.shutdownNow();
        }
        assertThat(List.of(a.shutdowns(), b.shutdowns(), c.shutdowns())).containsOnly(1);
        assertThat(app.snapshot().values())
                .allSatisfy(s -> assertThat(s.lifecycle()).isEqualTo(ProcessorState.Lifecycle.STOPPED));
    }

    @Test
    void a_drain_timeout_returns_false_and_no_finalizer_runs_after_the_forced_stop() throws Exception {
        InMemorySource s = source("s", 5);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        AtomicInteger interrupted = new AtomicInteger();
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.serial(), m -> {
            started.countDown();
            try {
                never.await();
            } catch (InterruptedException e) {
                interrupted.incrementAndGet();
                throw e;
            }
            return AckDecision.ok();
        }).build().start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(app.stop(Duration.ofMillis(200), Duration.ofSeconds(5))).isFalse();
        int after = s.decisions().size();
        never.countDown();
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> s.decisions().size() == after);
        assertThat(after).isZero();
        assertThat(app.stop()).isFalse(); // later calls share the first result
    }

    @Test
    void a_handler_that_ignores_the_interrupt_and_returns_after_the_forced_stop_finalizes_nothing() throws Exception {
        InMemorySource s = source("s", 5);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch returned = new CountDownLatch(1);
        ProcessingApp app = ProcessingApp.builder().processor("p", s, Concurrency.serial(), m -> {
            started.countDown();
            while (true) {
                try {
                    release.await(); // a handler that swallows interrupts
                    break;
                } catch (InterruptedException ignored) {
                    // keeps waiting
                }
            }
            returned.countDown();
            return AckDecision.ok();
        }).build().start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(app.stop(Duration.ofMillis(200), Duration.ofMillis(200))).isFalse();
        release.countDown();
        assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> s.decisions().isEmpty());
    }

    @Test
    void a_graceful_stop_under_load_finalizes_every_pulled_message_exactly_once() throws Exception {
        InMemorySource s = source("s", 20_000);
        ProcessingApp app = ProcessingApp.builder().inboxSize(50)
                .processor("p", s, Concurrency.unordered(8), m -> {
                    new CountDownLatch(1).await(100, TimeUnit.MICROSECONDS);
                    return AckDecision.ok();
                }).build().start();
        await().atMost(WAIT).until(() -> s.decisions().size() > 1000);
        assertThat(app.stop()).isTrue();
        Map<String, Long> counts = s.decisions().stream()
                .collect(Collectors.groupingBy(InMemorySource.Finalized::messageId, Collectors.counting()));
        assertThat(counts.values()).allMatch(n -> n == 1);
        assertThat((long) counts.size()).isEqualTo(s.pulled()).isLessThan(20_000);
        assertThat(app.snapshot().get("p").received()).isEqualTo(s.pulled());
    }

    // 9 ---------------------------------------------------------------------------------------

    @Test
    void a_source_failure_drains_what_was_ingested_then_marks_the_processor_failed() throws Exception {
        // unordered(1) reads ahead into its inbox; the failure happens while messages still wait there
        InMemorySource s = source("s", 20);
        CountDownLatch sourceFailed = new CountDownLatch(1);
        ProcessingApp app = ProcessingApp.builder()
                .processor("p", TestSources.failingAfter(s, 7, sourceFailed), Concurrency.unordered(1), m -> {
                    sourceFailed.await();
                    return AckDecision.ok();
                })
                .build().start();
        assertThat(app.awaitTermination(WAIT)).isTrue();
        ProcessorState state = app.snapshot().get("p");
        assertThat(state.lifecycle()).isEqualTo(ProcessorState.Lifecycle.FAILED);
        assertThat(state.failure()).contains("connection reset by broker");
        assertThat(s.decisions()).hasSize(7);
        assertThat(state.received()).isEqualTo(7);
    }

    @Test
    void a_serial_processor_fails_on_a_source_failure_after_finalizing_what_it_took() throws Exception {
        InMemorySource s = source("s", 20);
        ProcessingApp app = ProcessingApp.builder()
                .processor("p", TestSources.failingAfter(s, 7, new CountDownLatch(1)), Concurrency.serial(),
                        m -> AckDecision.ok())
                .build().start();
        assertThat(app.awaitTermination(WAIT)).isTrue();
        assertThat(app.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.FAILED);
        assertThat(s.decisions()).hasSize(7);
    }
}
