package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The dead-letter API; each test dead-letters events of its own subscription, so no order matters. */
class DeadLetterApiTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static DeadLetters deadLetters;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        deadLetters = DeadLetters.of(store);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    /**
     * Appends one event of type {@code Bad0..Bad<n-1>} to each of {@code n} streams of the category
     * {@code name} and dead-letters them all under the subscription {@code name}; returns them newest first.
     */
    private static List<DeadLetter> letters(String name, int n) {
        for (int i = 0; i < n; i++) {
            append(store, name + "-" + i, "Bad" + i);
        }
        try (Subscription s = Subscription.builder(store, name, Target.category(name))
                .start(d -> Ack.deadLetter(DeadLetterReason.other("rejected",
                        "{\"code\":" + d.event().streamVersion() + "}")))) {
            await().atMost(WAIT).until(() -> deadLetters.count(name) == n);
        }
        return deadLetters.list(name, Long.MAX_VALUE, n);
    }

    @Test
    void lists_newest_first_in_pages_and_gets_by_id() {
        letters("paged", 5);
        List<DeadLetter> first = deadLetters.list("paged", Long.MAX_VALUE, 2);
        List<DeadLetter> second = deadLetters.list("paged", first.get(1).id(), 2);
        List<DeadLetter> third = deadLetters.list("paged", second.get(1).id(), 2);
        assertThat(first).extracting(DeadLetter::eventType).containsExactly("Bad4", "Bad3");
        assertThat(second).extracting(DeadLetter::eventType).containsExactly("Bad2", "Bad1");
        assertThat(third).extracting(DeadLetter::eventType).containsExactly("Bad0");
        DeadLetter letter = deadLetters.get(first.get(0).id()).orElseThrow();
        assertThat(letter.reasonKind()).isEqualTo("other");
        assertThat(letter.reasonSummary()).isEqualTo("rejected");
        assertThat(letter.reasonJson()).contains("\"code\": 1");
        assertThat(letter.attempts()).isOne();
        assertThat(letter.replayedAt()).isEmpty();
        assertThat(deadLetters.get(-1)).isEmpty();
    }

    @Test
    void replay_redelivers_once_records_the_outcome_and_is_idempotent() {
        DeadLetter target = letters("replayed", 1).get(0);
        AtomicInteger calls = new AtomicInteger();
        EventHandler fixed = d -> {
            calls.incrementAndGet();
            assertThat(d.event().eventId()).isEqualTo(target.eventId());
            return Ack.ok();
        };
        List<DeadLetter> replayed = deadLetters.replay(List.of(target.id(), target.id()), fixed);
        assertThat(calls).hasValue(1);
        assertThat(replayed).singleElement().satisfies(l -> {
            assertThat(l.replayedAt()).isPresent();
            assertThat(l.replayOutcome()).contains(DeadLetters.REPLAYED_OK);
        });
        assertThat(deadLetters.replay(List.of(target.id()), fixed)).isEmpty();
        assertThat(calls).hasValue(1);
    }

    @Test
    void a_failed_replay_is_recorded_and_can_be_tried_again() {
        DeadLetter target = letters("failing", 1).get(0);
        List<DeadLetter> failed = deadLetters.replay(List.of(target.id()), d -> {
            throw new IllegalStateException("still broken");
        });
        assertThat(failed.get(0).replayOutcome()).hasValueSatisfying(o -> assertThat(o).contains("still broken"));
        assertThat(deadLetters.replay(List.of(target.id()), d -> null).get(0).replayOutcome())
                .contains("failed: the handler returned null instead of an Ack");
        List<DeadLetter> again = deadLetters.replay(List.of(target.id()), d -> Ack.ok());
        assertThat(again.get(0).replayOutcome()).contains(DeadLetters.REPLAYED_OK);
    }

    @Test
    void a_concurrent_replay_answering_later_never_overwrites_a_recorded_ok() throws Exception {
        DeadLetter target = letters("racing", 1).get(0);
        CountDownLatch slowInHandler = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<List<DeadLetter>> slow = CompletableFuture
                .supplyAsync(() -> deadLetters.replay(List.of(target.id()), d -> {
                    slowInHandler.countDown();
                    release.await();
                    return Ack.retry(Duration.ZERO);
                }));
        assertThat(slowInHandler.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        // a second operator replays the same letter meanwhile; both deliver it (documented)
        assertThat(deadLetters.replay(List.of(target.id()), d -> Ack.ok())).singleElement()
                .satisfies(l -> assertThat(l.replayOutcome()).contains(DeadLetters.REPLAYED_OK));
        release.countDown();
        // before: the slower replay's "retry requested" overwrote the ok, and the letter looked unreplayed
        assertThat(slow.get(WAIT.toSeconds(), TimeUnit.SECONDS)).singleElement()
                .satisfies(l -> assertThat(l.replayOutcome()).contains(DeadLetters.REPLAYED_OK));
        assertThat(deadLetters.get(target.id()).orElseThrow().replayOutcome()).contains(DeadLetters.REPLAYED_OK);
    }

    @Test
    void a_replay_with_no_handler_a_null_id_or_a_missing_letter_delivers_and_records_nothing() {
        DeadLetter target = letters("refused", 1).get(0);
        AtomicInteger calls = new AtomicInteger();
        EventHandler counting = d -> {
            calls.incrementAndGet();
            return Ack.ok();
        };
        // before: each letter was delivered to nothing and recorded "failed: java.lang.NullPointerException"
        assertThatThrownBy(() -> deadLetters.replay(List.of(target.id()), null))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("handler=null");
        assertThatThrownBy(() -> deadLetters.replay(null, counting))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("ids=null");
        assertThatThrownBy(() -> deadLetters.replay(java.util.Arrays.asList(target.id(), null), counting))
                .isInstanceOf(SubscriptionConfigException.class).hasMessageContaining("must not hold a null");
        // before: the letters ahead of the missing one were delivered before the error
        assertThatThrownBy(() -> deadLetters.replay(List.of(target.id(), -1L), counting))
                .isInstanceOf(SubscriptionException.class)
                .hasMessage("dead letter -1 does not exist; nothing was replayed");
        assertThat(calls).hasValue(0);
        assertThat(deadLetters.get(target.id()).orElseThrow().replayedAt()).isEmpty();
    }

    @Test
    void an_event_that_fails_again_after_a_successful_replay_and_a_checkpoint_reset_is_a_fresh_dead_letter() {
        append(store, "refail-1", "Bad");
        try (Subscription s = Subscription.builder(store, "refailer", Target.category("refail"))
                .start(d -> Ack.deadLetter(DeadLetterReason.invalid("first")))) {
            await().atMost(WAIT).until(() -> deadLetters.count("refailer") == 1);
        }
        DeadLetter letter = deadLetters.list("refailer", Long.MAX_VALUE, 1).get(0);
        assertThat(deadLetters.replay(List.of(letter.id()), d -> Ack.ok())).singleElement()
                .satisfies(l -> assertThat(l.replayOutcome()).contains(DeadLetters.REPLAYED_OK));
        Checkpoints.of(store).reset("refailer", dev.waymark.store.GlobalPosition.START); // a rebuild
        try (Subscription s = Subscription.builder(store, "refailer", Target.category("refail"))
                .start(d -> Ack.deadLetter(DeadLetterReason.invalid("second")))) {
            // before: the second failure was dropped and the letter still read "replayed ok"
            await().atMost(WAIT).until(() -> deadLetters.get(letter.id()).orElseThrow()
                    .replayedAt().isEmpty());
        }
        assertThat(deadLetters.get(letter.id()).orElseThrow()).satisfies(l -> {
            assertThat(l.reasonSummary()).isEqualTo("invalid payload: second");
            assertThat(l.replayOutcome()).isEmpty();
        });
        assertThat(deadLetters.count("refailer")).isOne();
    }

    @Test
    void an_other_reason_without_details_or_with_text_details_is_recorded_whole_and_the_subscription_moves_on() {
        append(store, "vague-1", "NoDetails");
        append(store, "vague-2", "TextDetails");
        append(store, "vague-3", "After");
        List<String> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Subscription s = Subscription.builder(store, "vague", Target.category("vague")).start(d -> {
            handled.add(d.event().type());
            return switch (d.event().type()) {
                case "NoDetails" -> Ack.deadLetter(DeadLetterReason.other("no details", null));
                case "TextDetails" -> Ack.deadLetter(DeadLetterReason.other("text details", "not json"));
                default -> Ack.ok();
            };
        })) {
            // before: the reason was stored as the details alone, so null broke the NOT NULL column and
            // text the jsonb cast; the subscription stopped on the error and redelivered it for ever
            await().atMost(WAIT).until(() -> handled.contains("After") || !s.isRunning());
            assertThat(s.failure()).isEmpty();
            assertThat(handled).containsExactly("NoDetails", "TextDetails", "After");
        }
        assertThat(deadLetters.list("vague", Long.MAX_VALUE, 5)).extracting(DeadLetter::reasonJson).containsExactly(
                "{\"kind\": \"other\", \"detail\": \"not json\", \"summary\": \"text details\"}",
                "{\"kind\": \"other\", \"summary\": \"no details\"}");
    }

    @Test
    void a_reason_holding_nul_characters_is_recorded_with_replacement_characters_and_the_subscription_moves_on() {
        append(store, "nul-1", "Poison");
        append(store, "nul-2", "Other");
        append(store, "nul-3", "After");
        List<String> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Subscription s = Subscription.builder(store, "nul", Target.category("nul")).start(d -> {
            handled.add(d.event().type());
            return switch (d.event().type()) {
                case "Poison" -> Ack.deadLetter(DeadLetterReason.poison("byte \0 here"));
                case "Other" -> Ack.deadLetter(DeadLetterReason.other("odd \0 summary", "{\"raw\": \"a\\u0000b\"}"));
                default -> Ack.ok();
            };
        })) {
            // a NUL is refused by text and jsonb columns alike: the letter could never be recorded,
            // so the subscription stopped on the event and redelivered it for ever
            await().atMost(WAIT).until(() -> handled.contains("After") || !s.isRunning());
            assertThat(s.failure()).isEmpty();
            assertThat(handled).containsExactly("Poison", "Other", "After");
        }
        assertThat(deadLetters.list("nul", Long.MAX_VALUE, 5))
                .extracting(DeadLetter::reasonSummary, DeadLetter::reasonJson)
                .containsExactly(
                        tuple("odd \uFFFD summary",
                                "{\"kind\": \"other\", \"detail\": {\"raw\": \"a\uFFFDb\"}, \"summary\": \"odd \uFFFD summary\"}"),
                        tuple("poison: byte \uFFFD here",
                                "{\"kind\": \"poison\", \"detail\": \"byte \uFFFD here\", \"summary\": \"poison: byte \uFFFD here\"}"));
        long poisonId = deadLetters.list("nul", Long.MAX_VALUE, 5).get(1).id();
        assertThat(deadLetters.replay(List.of(poisonId), d -> {
            throw new IllegalStateException("replay \0 failed");
        })).singleElement().satisfies(l -> assertThat(l.replayOutcome())
                .contains("failed: java.lang.IllegalStateException: replay \uFFFD failed"));
    }

    @Test
    void purge_deletes_a_subscriptions_letters() {
        letters("kept", 2);
        letters("purged", 1);
        assertThat(deadLetters.purge("purged")).isOne();
        assertThat(deadLetters.count("purged")).isZero();
        assertThat(deadLetters.count("kept")).isEqualTo(2);
    }

    /** Runs {@code handler} on one event of the category {@code name} until it is dead-lettered; returns the letter. */
    private static DeadLetter deadLettered(String name, EventHandler handler) {
        append(store, name + "-1", "E");
        try (Subscription s = Subscription.builder(store, name, Target.category(name))
                .retry(RetryPolicy.fixed(2, Duration.ZERO))
                .start(handler)) {
            await().atMost(WAIT).until(() -> deadLetters.count(name) == 1);
        }
        return deadLetters.list(name, Long.MAX_VALUE, 1).get(0);
    }

    @Test
    void a_dead_letter_keeps_the_handlers_exception_bounded_and_cut_between_code_points() {
        // 1998 chars, then an emoji across the cut (chars 1998 and 1999), a NUL, and more
        String message = "declined ".repeat(222) + "\uD83D\uDE00\u0000" + "x".repeat(100);
        assertThat(message.length()).isGreaterThan(DeadLetter.MAX_ERROR_MESSAGE_LENGTH);
        AtomicInteger calls = new AtomicInteger();
        DeadLetter letter = deadLettered("thrown", d -> {
            throw new IllegalStateException(calls.incrementAndGet() == 1 ? "first" : message);
        });
        // before: only "max retry attempts exceeded (2)"; the exception was lost
        assertThat(letter.reasonKind()).isEqualTo("max_attempts");
        assertThat(letter.error()).get().satisfies(e -> {
            assertThat(e.type()).isEqualTo("java.lang.IllegalStateException");
            String stored = e.message().orElseThrow();
            assertThat(stored).hasSizeLessThanOrEqualTo(DeadLetter.MAX_ERROR_MESSAGE_LENGTH)
                    .startsWith("declined declined").endsWith("declined \u2026"); // the last attempt's
            assertThat(stored.chars().noneMatch(c -> Character.isSurrogate((char) c))).isTrue();
        });
    }

    @Test
    void an_explicit_dead_letter_keeps_the_cause_it_carries_and_none_without_one() {
        DeadLetter withCause = deadLettered("caused", d -> Ack.deadLetter(DeadLetterReason.poison("bad card"),
                new java.io.UncheckedIOException("card service: \u0000 refused", new java.io.IOException("io"))));
        assertThat(withCause.error()).get().satisfies(e -> {
            assertThat(e.type()).isEqualTo("java.io.UncheckedIOException");
            assertThat(e.message()).contains("card service: \uFFFD refused");
        });
        assertThat(deadLettered("uncaused", d -> Ack.deadLetter(DeadLetterReason.poison("bad"))).error()).isEmpty();
        assertThat(deadLettered("retried", d -> Ack.retry(Duration.ZERO)).error()).isEmpty();
        assertThat(deadLettered("nomessage", d -> {
            throw new IllegalArgumentException();
        }).error()).contains(new DeadLetter.HandlerError("java.lang.IllegalArgumentException",
                java.util.Optional.empty()));
    }
}
