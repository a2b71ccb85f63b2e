package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class AckStreamTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void the_reader_waits_for_each_answer_and_retries_carry_the_attempt() throws Exception {
        append(store, "pull-1", "A", "B");
        try (AckStream stream = Subscription.builder(store, "puller", Target.category("pull"))
                .retry(RetryPolicy.fixed(3, Duration.ZERO)).checkpointEvery(1, Duration.ZERO).openAckStream()) {
            AckStream.Item a = stream.next(Duration.ofSeconds(10)).orElseThrow();
            assertThat(a.delivery().event().type()).isEqualTo("A");
            // nothing else is offered until A is answered
            assertThat(stream.next(Duration.ofMillis(300))).isEmpty();
            a.reply(Ack.retry(Duration.ZERO));
            AckStream.Item again = stream.next(Duration.ofSeconds(10)).orElseThrow();
            assertThat(again.delivery().event().type()).isEqualTo("A");
            assertThat(again.delivery().attempt()).isOne();
            again.reply(Ack.ok());
            AckStream.Item b = stream.next(Duration.ofSeconds(10)).orElseThrow();
            assertThat(b.delivery().event().type()).isEqualTo("B");
            b.reply(Ack.ok());
            GlobalPosition head = store.readStreamForward("pull-1", 0, 2).get(1).position();
            await().atMost(Duration.ofSeconds(10)).until(() -> Checkpoints.of(store)
                    .get("puller", Partition.WHOLE).equals(Optional.of(head)));
        }
    }

    @Test
    void closing_with_an_unanswered_item_writes_no_acknowledgement_for_it() throws Exception {
        append(store, "closing-1", "A", "B");
        AckStream stream = Subscription.builder(store, "closer", Target.category("closing"))
                .checkpointEvery(1, Duration.ZERO).openAckStream();
        stream.next(Duration.ofSeconds(10)).orElseThrow().reply(Ack.ok());
        AckStream.Item b = stream.next(Duration.ofSeconds(10)).orElseThrow();
        assertThat(b.delivery().event().type()).isEqualTo("B");
        stream.close();
        assertThat(stream.subscription().awaitTermination(Duration.ofSeconds(10))).isTrue();
        GlobalPosition first = store.readStreamForward("closing-1", 0, 1).get(0).position();
        assertThat(Checkpoints.of(store).get("closer", Partition.WHOLE)).contains(first);
        assertThatThrownBy(() -> stream.next(Duration.ofMillis(10))).isInstanceOf(SubscriptionException.class);
    }
}
