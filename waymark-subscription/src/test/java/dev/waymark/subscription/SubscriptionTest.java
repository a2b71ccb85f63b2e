package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class SubscriptionTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static final AtomicInteger names = new AtomicInteger();

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    /** A fresh category and subscription name per test, so tests do not see each other's events. */
    private static String fresh() {
        return "c" + names.incrementAndGet();
    }

    private static SubscriptionBuilder builder(String category) {
        return Subscription.builder(store, "sub-" + category, Target.category(category))
                .retry(RetryPolicy.fixed(5, Duration.ZERO))
                .pollInterval(Duration.ofMillis(200));
    }

    /** Streams of {@code category} that member {@code member} of a group of 2 owns. */
    private static java.util.stream.Stream<String> streamsOf(String category, int member) {
        return java.util.stream.IntStream.range(0, 40).mapToObj(i -> category + "-" + i)
                .filter(n -> Partition.of(member, 2).owns(n));
    }

    private static GlobalPosition checkpoint(String category) {
        return Checkpoints.of(store).get("sub-" + category, Partition.WHOLE).orElseThrow();
    }

    private static GlobalPosition head(String category) {
        return store.readCategoryBackward(category, GlobalPosition.END, 1).get(0).position();
    }

    @Test
    void catches_up_then_delivers_live_events_in_order() {
        String c = fresh();
        append(store, c + "-1", "A", "B", "C");
        Recorder recorder = Recorder.ok();
        try (Subscription s = builder(c).start(recorder)) {
            await().atMost(WAIT).until(() -> recorder.size() == 3);
            append(store, c + "-1", "D");
            append(store, c + "-2", "E");
            await().atMost(WAIT).until(() -> recorder.size() == 5);
            assertThat(recorder.types()).containsExactly("A", "B", "C", "D", "E");
            assertThat(recorder.deliveries).allSatisfy(d -> assertThat(d.attempt()).isZero());
            await().atMost(WAIT).until(() -> checkpoint(c).equals(head(c)));
        }
    }

    @Test
    void a_restart_resumes_from_the_checkpoint() throws Exception {
        String c = fresh();
        append(store, c + "-1", "A", "B", "C", "D", "E");
        Recorder first = Recorder.ok();
        Subscription s = builder(c).start(first);
        await().atMost(WAIT).until(() -> first.size() == 5);
        assertThat(s.stop(Duration.ofSeconds(5))).isTrue();
        assertThat(checkpoint(c)).isEqualTo(head(c));

        append(store, c + "-1", "F", "G");
        Recorder second = Recorder.ok();
        try (Subscription again = builder(c).start(second)) {
            await().atMost(WAIT).until(() -> second.size() == 2);
            assertThat(second.types()).containsExactly("F", "G");
        }
    }

    @Test
    void a_retried_event_is_dead_lettered_when_the_budget_is_spent_and_the_subscription_moves_on() {
        String c = fresh();
        append(store, c + "-1", "A", "Bad", "C");
        Recorder recorder = new Recorder(d -> d.event().type().equals("Bad") ? Ack.retry(Duration.ZERO) : Ack.ok());
        try (Subscription s = builder(c).retry(RetryPolicy.fixed(3, Duration.ZERO)).start(recorder)) {
            await().atMost(WAIT).until(() -> recorder.types().contains("C"));
            assertThat(recorder.types()).containsExactly("A", "Bad", "Bad", "Bad", "C");
            assertThat(recorder.deliveries).extracting(Delivery::attempt).containsExactly(0, 0, 1, 2, 0);
            await().atMost(WAIT).until(() -> checkpoint(c).equals(head(c)));
        }
        List<DeadLetter> letters = DeadLetters.of(store).list("sub-" + c, Long.MAX_VALUE, 10);
        assertThat(letters).singleElement().satisfies(l -> {
            assertThat(l.eventType()).isEqualTo("Bad");
            assertThat(l.attempts()).isEqualTo(3);
            assertThat(l.reasonKind()).isEqualTo("max_attempts");
            assertThat(l.reasonSummary()).isEqualTo("max retry attempts exceeded (3)");
        });
    }

    @Test
    void retry_then_ok_delivers_the_same_event_again_without_a_dead_letter() {
        String c = fresh();
        append(store, c + "-1", "A", "Flaky", "C");
        Recorder recorder = new Recorder(d -> d.event().type().equals("Flaky") && d.attempt() < 2
                ? Ack.retry(Duration.ofMillis(10))
                : Ack.ok());
        try (Subscription s = builder(c).start(recorder)) {
            await().atMost(WAIT).until(() -> recorder.types().contains("C"));
            assertThat(recorder.types()).containsExactly("A", "Flaky", "Flaky", "Flaky", "C");
        }
        assertThat(DeadLetters.of(store).count("sub-" + c)).isZero();
    }

    @Test
    void a_handler_exception_is_a_retry_and_a_poison_event_never_blocks_the_subscription() {
        String c = fresh();
        append(store, c + "-1", "Poison", "Throws", "Fine");
        Recorder recorder = new Recorder(d -> switch (d.event().type()) {
            case "Poison" -> Ack.deadLetter(DeadLetterReason.poison("cannot parse"));
            case "Throws" -> throw new IllegalStateException("boom");
            default -> Ack.ok();
        });
        try (Subscription s = builder(c).retry(RetryPolicy.fixed(2, Duration.ZERO)).start(recorder)) {
            await().atMost(WAIT).until(() -> recorder.types().contains("Fine"));
            assertThat(recorder.types()).containsExactly("Poison", "Throws", "Throws", "Fine");
        }
        List<DeadLetter> letters = DeadLetters.of(store).list("sub-" + c, Long.MAX_VALUE, 10);
        assertThat(letters).extracting(DeadLetter::eventType).containsExactly("Throws", "Poison");
        assertThat(letters).extracting(DeadLetter::reasonKind).containsExactly("max_attempts", "poison");
        assertThat(letters.get(1).reasonJson()).contains("\"detail\": \"cannot parse\"");
    }

    @Test
    void the_type_filter_skips_other_types_and_the_checkpoint_passes_them() {
        String c = fresh();
        append(store, c + "-1", "Wanted", "Other", "Other", "Wanted", "Other");
        Recorder recorder = Recorder.ok();
        try (Subscription s = builder(c).eventTypes("Wanted").start(recorder)) {
            await().atMost(WAIT).until(() -> checkpoint(c).equals(head(c)));
            assertThat(recorder.types()).containsExactly("Wanted", "Wanted");
        }
    }

    @Test
    void checkpoint_or_fail_refuses_to_start_without_a_checkpoint_and_calls_no_handler() throws Exception {
        String c = fresh();
        append(store, c + "-1", "A");
        Recorder recorder = Recorder.ok();
        // refused from start(), as a group-size mismatch is
        assertThatThrownBy(() -> builder(c)
                .startFrom(StartPosition.checkpointOrFail()).start(recorder))
                .isInstanceOf(CheckpointMissingException.class);
        assertThat(recorder.size()).isZero();
        assertThat(Checkpoints.of(store).get("sub-" + c, Partition.WHOLE)).isEmpty();
    }

    @Test
    void checkpoint_or_end_delivers_only_new_events_and_remembers_its_start() throws Exception {
        String c = fresh();
        append(store, c + "-1", "Old");
        Recorder recorder = Recorder.ok();
        Subscription s = builder(c).startFrom(StartPosition.checkpointOrEnd()).start(recorder);
        await().atMost(WAIT).until(() -> Checkpoints.of(store).get("sub-" + c, Partition.WHOLE).isPresent());
        s.stop(Duration.ofSeconds(5));
        append(store, c + "-1", "New");
        try (Subscription again = builder(c).startFrom(StartPosition.checkpointOrEnd()).start(recorder)) {
            await().atMost(WAIT).until(() -> recorder.size() == 1);
            assertThat(recorder.types()).containsExactly("New");
        }
    }

    @Test
    void consumer_group_members_keep_their_own_checkpoints() {
        String c = fresh();
        for (int i = 0; i < 20; i++) {
            append(store, c + "-" + i, "A");
        }
        Recorder r0 = Recorder.ok();
        Recorder r1 = Recorder.ok();
        try (Subscription m0 = builder(c).consumerGroup(0, 2).start(r0);
                Subscription m1 = builder(c).consumerGroup(1, 2).start(r1)) {
            await().atMost(WAIT).until(() -> r0.size() + r1.size() == 20);
            assertThat(r0.deliveries).allSatisfy(d -> assertThat(d.partition()).isEqualTo(Partition.of(0, 2)));
            assertThat(r1.deliveries).allSatisfy(d -> assertThat(d.partition()).isEqualTo(Partition.of(1, 2)));
            await().atMost(WAIT).until(() -> Checkpoints.of(store).get("sub-" + c, Partition.of(0, 2)).isPresent()
                    && Checkpoints.of(store).get("sub-" + c, Partition.of(1, 2)).isPresent());
        }
        assertThat(Checkpoints.of(store).list("sub-" + c)).extracting(CheckpointRow::member).containsExactly(0, 1);
    }

    @Test
    void an_idle_member_moves_its_cursor_past_the_other_members_events() {
        String c = fresh();
        List<String> others = streamsOf(c, 1).limit(5).toList();
        for (int v = 0; v < 10; v++) {
            others.forEach(n -> append(store, n, "A"));
        }
        GlobalPosition last = head(c);
        Recorder r0 = Recorder.ok();
        try (Subscription m0 = builder(c).consumerGroup(0, 2).checkpointEvery(1000, Duration.ZERO).start(r0)) {
            // before: the cursor moved only to the member's own events, so this member stayed at the
            // start and walked all 50 of the other member's events again on every poll and wake
            await().atMost(WAIT).until(() -> Checkpoints.of(store).get("sub-" + c, Partition.of(0, 2))
                    .filter(p -> p.isAfter(last)).isPresent());
            String mine = streamsOf(c, 0).findFirst().orElseThrow();
            append(store, mine, "Mine");
            await().atMost(WAIT).until(() -> r0.types().equals(List.of("Mine")));
        }
    }

    @Test
    void an_idle_member_never_moves_past_an_open_writers_event() throws Exception {
        String c = fresh();
        String mine = streamsOf(c, 0).findFirst().orElseThrow();
        String other = streamsOf(c, 1).findFirst().orElseThrow();
        append(store, other, "Before");
        GlobalPosition before = head(c);
        Recorder r0 = Recorder.ok();
        try (Subscription m0 = builder(c).consumerGroup(0, 2).checkpointEvery(1000, Duration.ZERO).start(r0);
                java.sql.Connection writer = POSTGRES.dataSource().getConnection()) {
            writer.setAutoCommit(false);
            store.append(writer, mine, dev.waymark.store.ExpectedVersion.any(),
                    List.of(dev.waymark.store.EventData.json("Late", "{}"))); // holds its transaction id
            for (int i = 0; i < 20; i++) {
                append(store, other, "After"); // committed, above the open writer's id
            }
            await().atMost(WAIT).until(() -> Checkpoints.of(store).get("sub-" + c, Partition.of(0, 2))
                    .filter(p -> p.isAfter(before)).isPresent()); // moved, up to the open writer
            writer.commit();
            StoreInternals.of(store).signalAppended();
            await().atMost(WAIT).until(() -> r0.types().equals(List.of("Late")));
        }
    }

    @Test
    void stopping_during_a_handler_writes_no_acknowledgement_for_it() throws Exception {
        String c = fresh();
        append(store, c + "-1", "A", "Slow", "C");
        java.util.concurrent.CountDownLatch inSlow = new java.util.concurrent.CountDownLatch(1);
        Recorder recorder = new Recorder(d -> {
            if (d.event().type().equals("Slow")) {
                inSlow.countDown();
                try {
                    new java.util.concurrent.CountDownLatch(1).await(); // a handler that never ends by itself
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }
            return Ack.ok();
        });
        Subscription s = builder(c).checkpointEvery(1, Duration.ZERO).start(recorder);
        assertThat(inSlow.await(15, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(s.stop(Duration.ofMillis(100))).isTrue();
        RecordedEvent first = store.readStreamForward(c + "-1", 0, 1).get(0);
        assertThat(checkpoint(c)).isEqualTo(first.position());
        assertThat(DeadLetters.of(store).count("sub-" + c)).isZero();
    }

    @Test
    void stop_answers_false_while_a_handler_ignores_its_interrupt_and_true_once_it_returned() throws Exception {
        String c = fresh();
        append(store, c + "-1", "Stubborn");
        java.util.concurrent.CountDownLatch inHandler = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Recorder recorder = new Recorder(d -> {
            inHandler.countDown();
            while (release.getCount() > 0) {
                try {
                    release.await(); // uninterruptible work, as blocking I/O can be
                } catch (InterruptedException ignored) {
                    // keeps waiting
                }
            }
            return Ack.ok();
        });
        Subscription s = builder(c).start(recorder);
        try {
            assertThat(inHandler.await(15, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            // the grace, the interrupt, then 10 s for the handler to return: it does not
            assertThat(s.stop(Duration.ofMillis(100))).isFalse();
            assertThat(s.isRunning()).isTrue();
            release.countDown();
            assertThat(s.stop(Duration.ofSeconds(10))).as("a later call, once the handler returned").isTrue();
            assertThatThrownBy(() -> s.stop(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("stop grace must be >= 0, got PT-0.001S");
        } finally {
            release.countDown();
            s.stop(Duration.ofSeconds(10));
        }
    }

    @Test
    void a_handler_that_fails_while_stopping_acknowledges_nothing_even_with_the_interrupt_cleared() throws Exception {
        String c = fresh();
        append(store, c + "-1", "A", "Slow", "C");
        java.util.concurrent.CountDownLatch inSlow = new java.util.concurrent.CountDownLatch(1);
        Recorder recorder = new Recorder(d -> {
            if (d.event().type().equals("Slow")) {
                inSlow.countDown();
                try {
                    new java.util.concurrent.CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException("wrapped, flag cleared", e); // as many handlers do
                }
            }
            return Ack.ok();
        });
        // one attempt: before, the wrapped interrupt was an ordinary failure, dead-lettered at once
        Subscription s = builder(c).retry(RetryPolicy.fixed(1, Duration.ZERO)).checkpointEvery(1, Duration.ZERO)
                .start(recorder);
        assertThat(inSlow.await(15, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(s.stop(Duration.ofMillis(100))).isTrue();
        RecordedEvent first = store.readStreamForward(c + "-1", 0, 1).get(0);
        assertThat(checkpoint(c)).isEqualTo(first.position());
        assertThat(DeadLetters.of(store).count("sub-" + c)).isZero();
    }

    @Test
    void a_handler_error_is_retried_and_dead_lettered_like_an_exception() {
        String c = fresh();
        append(store, c + "-1", "A", "Bad", "C");
        Recorder recorder = new Recorder(d -> {
            if (d.event().type().equals("Bad")) {
                throw new AssertionError("a handler's assertion");
            }
            return Ack.ok();
        });
        try (Subscription s = builder(c).retry(RetryPolicy.fixed(2, Duration.ZERO)).start(recorder)) {
            await().atMost(WAIT).until(() -> recorder.types().contains("C")); // before: the reader died on "Bad"
            assertThat(recorder.types()).containsExactly("A", "Bad", "Bad", "C");
        }
        assertThat(DeadLetters.of(store).list("sub-" + c, Long.MAX_VALUE, 10)).singleElement()
                .satisfies(l -> assertThat(l.reasonKind()).isEqualTo("max_attempts"));
    }

    @Test
    void stop_returns_even_when_the_stopped_listener_throws_an_error() {
        String c = fresh();
        append(store, c + "-1", "A");
        Recorder recorder = Recorder.ok();
        Subscription s = builder(c).listener(new SubscriptionListener() {
            @Override
            public void stopped(SubscriptionConfig config, GlobalPosition position, Throwable error) {
                throw new StackOverflowError("injected");
            }
        }).start(recorder);
        await().atMost(WAIT).until(() -> recorder.size() == 1);
        // before: the worker never counted down, and stop waited out its grace and 10 s more, then said false
        assertThat(s.stop(Duration.ofSeconds(1))).isTrue();
    }

    @Test
    void an_event_hidden_when_its_wake_came_is_delivered_soon_after_the_hiding_transaction_ends() throws Exception {
        String c = fresh();
        append(store, c + "-1", "Before");
        Recorder recorder = Recorder.ok();
        // polls only every 30 s, and its store's fallback tick comes every 10 min: before, the
        // event waited for one of them (by default, the 1 s tick)
        try (EventStore quiet = EventStore.builder(POSTGRES.dataSource()).fallbackPoll(Duration.ofMinutes(10)).build();
                Subscription s = Subscription.builder(quiet, "sub-" + c, Target.category(c))
                        .pollInterval(Duration.ofSeconds(30)).start(recorder);
                java.sql.Connection blocker = POSTGRES.dataSource().getConnection()) {
            await().atMost(WAIT).until(() -> recorder.size() == 1);
            blocker.setAutoCommit(false);
            try (java.sql.Statement st = blocker.createStatement()) {
                st.execute("SELECT pg_current_xact_id()"); // an open transaction with a smaller id
            }
            append(quiet, c + "-1", "Hidden"); // its wake comes while the blocker hides it
            // woken, the store's shared probe found it hidden
            await().atMost(WAIT).until(() -> quiet.headWatch().latest().hiddenEvents());
            assertThat(recorder.types()).containsExactly("Before");
            blocker.commit(); // signals nobody
            await().atMost(Duration.ofSeconds(5)).until(() -> recorder.types().equals(List.of("Before", "Hidden")));
        }
    }

    @Test
    void an_event_whose_hiding_transaction_ends_between_two_probes_is_not_left_for_the_poll() throws Exception {
        String c = fresh();
        append(store, c + "-1", "Before");
        Recorder recorder = Recorder.ok();
        try (java.sql.Connection blocker = POSTGRES.dataSource().getConnection()) {
            // the head probe's connections once armed: before its second one (the first probes after
            // the append's wake and finds the event hidden), the hiding transaction ends; once, the
            // subscription thread's page read and then its own probe had the same race
            AtomicInteger armed = new AtomicInteger(-1);
            javax.sql.DataSource hooked = dev.waymark.testkit.FailingDataSource.hooked(POSTGRES.dataSource(), () -> {
                if (Thread.currentThread().getName().startsWith("waymark-head-") && armed.get() >= 0
                        && armed.incrementAndGet() == 2) {
                    try {
                        blocker.commit(); // signals nobody
                    } catch (java.sql.SQLException e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            try (EventStore quiet = EventStore.builder(hooked).fallbackPoll(Duration.ofMinutes(10)).build();
                    Subscription s = Subscription.builder(quiet, "sub-" + c, Target.category(c))
                            .pollInterval(Duration.ofSeconds(30)).start(recorder)) {
                await().atMost(WAIT).until(() -> recorder.size() == 1);
                blocker.setAutoCommit(false);
                try (java.sql.Statement st = blocker.createStatement()) {
                    st.execute("SELECT pg_current_xact_id()"); // an open transaction with a smaller id
                }
                armed.set(0);
                append(quiet, c + "-1", "Hidden"); // its wake comes while the blocker hides it
                // before: the page did not see it, the probe after the page no longer found it hidden,
                // and it waited for the 30 s poll
                await().atMost(Duration.ofSeconds(5)).until(() -> recorder.types().equals(List.of("Before", "Hidden")));
            }
        }
    }

    @Test
    void the_setters_only_record_values_and_every_invalid_one_fails_at_start_as_a_config_exception() {
        // before: consumerGroup threw the store's InvalidInputException, retry and checkpointEvery
        // threw at the setter, although the builder said invalid values fail at start()
        SubscriptionBuilder b = builder(fresh()).consumerGroup(3, 2);
        assertThatThrownBy(b::config).isInstanceOf(SubscriptionConfigException.class)
                .hasMessage("consumerGroup member must be in [0, 2), got 3");
        b = builder(fresh()).consumerGroup(0, -1);
        assertThatThrownBy(b::config).isInstanceOf(SubscriptionConfigException.class)
                .hasMessage("consumerGroup size must be >= 1, got -1");
        b = builder(fresh()).retry(null);
        assertThatThrownBy(b::config).isInstanceOf(SubscriptionConfigException.class)
                .hasMessage("retry must not be null");
        b = builder(fresh()).listener(null); // before: silently SubscriptionListener.NONE
        assertThatThrownBy(b::config).isInstanceOf(SubscriptionConfigException.class)
                .hasMessage("listener must not be null (SubscriptionListener.NONE for none)");
        b = builder(fresh()).checkpointEvery(0, Duration.ZERO);
        assertThatThrownBy(b::config).isInstanceOf(SubscriptionConfigException.class)
                .hasMessage("checkpoint everyEvents must be >= 1, got 0");
        SubscriptionBuilder typed = builder(fresh()).eventTypes("A", "");
        assertThatThrownBy(() -> typed.openAckStream()).isInstanceOf(SubscriptionConfigException.class)
                .hasMessageContaining("eventTypes must not hold a null or blank type");
    }

    @Test
    void invalid_options_are_refused_with_the_option_named() {
        assertThatThrownBy(() -> builder(fresh()).batchSize(0).start(Recorder.ok()))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("batchSize");
        assertThatThrownBy(() -> builder(fresh()).consumerGroup(2, 2).start(Recorder.ok()))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("member must be in [0, 2)");
        assertThatThrownBy(() -> builder(fresh()).consumerGroup(0, 0).start(Recorder.ok()))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("size must be >= 1");
        assertThatThrownBy(() -> builder(fresh()).retry(RetryPolicy.fixed(0, Duration.ZERO)).start(Recorder.ok()))
                .hasMessageContaining("maxAttempts must be >= 1");
        assertThatThrownBy(
                () -> builder(fresh()).retry(RetryPolicy.fixed(1, Duration.ofMillis(-1))).start(Recorder.ok()))
                .hasMessageContaining("initialDelay must be >= 0");
        assertThatThrownBy(() -> Subscription.builder(store, " ", Target.all()).start(Recorder.ok()))
                .hasMessageContaining("subscription name");
        assertThatThrownBy(() -> Target.category("a-b")).hasMessageContaining("no '-'");
        assertThatThrownBy(() -> Ack.retry(Duration.ofSeconds(-1))).hasMessageContaining(">= 0");
    }
}
