package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class DeadLetterApiTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static EventStore store;
    private static DeadLetters deadLetters;

    @BeforeAll
    static void setUp() throws Exception {
        store = SubscriptionFixture.migratedStore(POSTGRES);
        deadLetters = DeadLetters.of(store);
        for (int i = 0; i < 5; i++) {
            append(store, "letter-" + i, "Bad" + i);
        }
        try (Subscription s = Subscription.builder(store, "letters", Target.category("letter"))
                .start(d -> Ack.deadLetter(DeadLetterReason.other("rejected", "{\"code\":" + d.event().streamVersion() + "}")))) {
            await().atMost(Duration.ofSeconds(15)).until(() -> deadLetters.count("letters") == 5);
        }
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void lists_newest_first_in_pages_and_gets_by_id() {
        List<DeadLetter> first = deadLetters.list("letters", Long.MAX_VALUE, 2);
        List<DeadLetter> second = deadLetters.list("letters", first.get(1).id(), 2);
        List<DeadLetter> third = deadLetters.list("letters", second.get(1).id(), 2);
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
        DeadLetter target = deadLetters.list("letters", Long.MAX_VALUE, 1).get(0);
        AtomicInteger calls = new AtomicInteger();
        EventHandler fixed = d -> {
            calls.incrementAndGet();
            assertThat(d.event().eventId()).isEqualTo(target.eventId());
            return Ack.ok();
        };
        List<DeadLetter> replayed = deadLetters.replay(List.of(target.id()), fixed);
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
        DeadLetter target = deadLetters.list("letters", Long.MAX_VALUE, 5).get(4);
        List<DeadLetter> failed = deadLetters.replay(List.of(target.id()), d -> {
            throw new IllegalStateException("still broken");
        });
        assertThat(failed.get(0).replayOutcome()).hasValueSatisfying(o -> assertThat(o).contains("still broken"));
        List<DeadLetter> again = deadLetters.replay(List.of(target.id()), d -> Ack.ok());
        assertThat(again.get(0).replayOutcome()).contains(DeadLetters.REPLAYED_OK);
    }

    @Test
    void an_event_that_fails_again_after_a_successful_replay_and_a_checkpoint_reset_is_a_fresh_dead_letter() {
        append(store, "refail-1", "Bad");
        try (Subscription s = Subscription.builder(store, "refailer", Target.category("refail"))
                .start(d -> Ack.deadLetter(DeadLetterReason.invalid("first")))) {
            await().atMost(Duration.ofSeconds(15)).until(() -> deadLetters.count("refailer") == 1);
        }
        DeadLetter letter = deadLetters.list("refailer", Long.MAX_VALUE, 1).get(0);
        assertThat(deadLetters.replay(List.of(letter.id()), d -> Ack.ok())).singleElement()
                .satisfies(l -> assertThat(l.replayOutcome()).contains(DeadLetters.REPLAYED_OK));
        Checkpoints.of(store).reset("refailer", dev.waymark.store.GlobalPosition.START); // a rebuild
        try (Subscription s = Subscription.builder(store, "refailer", Target.category("refail"))
                .start(d -> Ack.deadLetter(DeadLetterReason.invalid("second")))) {
            // before: the second failure was dropped and the letter still read "replayed ok"
            await().atMost(Duration.ofSeconds(15)).until(() -> deadLetters.get(letter.id()).orElseThrow()
                    .replayedAt().isEmpty());
        }
        assertThat(deadLetters.get(letter.id()).orElseThrow()).satisfies(l -> {
            assertThat(l.reasonSummary()).isEqualTo("invalid payload: second");
            assertThat(l.replayOutcome()).isEmpty();
        });
        assertThat(deadLetters.count("refailer")).isOne();
    }

    @Test
    void purge_deletes_a_subscriptions_letters() {
        append(store, "purgeable-1", "X");
        try (Subscription s = Subscription.builder(store, "purger", Target.category("purgeable"))
                .start(d -> Ack.deadLetter(DeadLetterReason.invalid("no")))) {
            await().atMost(Duration.ofSeconds(15)).until(() -> deadLetters.count("purger") == 1);
        }
        assertThat(deadLetters.purge("purger")).isOne();
        assertThat(deadLetters.count("purger")).isZero();
        assertThat(deadLetters.count("letters")).isEqualTo(5);
    }
}
