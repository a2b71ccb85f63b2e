package dev.waymark.messaging.store;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.MessageKey;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.Partition;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class SubscriptionSourceTest {

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

    private static SubscriptionSource source(String category) {
        return SubscriptionSource.of(Subscription.builder(store, "sub-" + category, Target.category(category))
                .checkpointEvery(1, Duration.ZERO));
    }

    @Test
    void halt_stops_the_reader_without_acknowledging_and_the_event_comes_back_on_restart() throws Exception {
        var appended = store.append("halting-1", ExpectedVersion.noStream(),
                IntStream.range(0, 3).mapToObj(i -> EventData.json("E" + i, "{}")).toList());
        ProcessingApp first = ProcessingApp.builder()
                .processor("p", source("halting"), Concurrency.serial(),
                        m -> m.envelope().headers().stream()
                                .anyMatch(h -> new String(h.value(), StandardCharsets.UTF_8).equals("E1"))
                                        ? AckDecision.halt("cannot go on")
                                        : AckDecision.ok())
                .build().start();
        assertThat(first.awaitTermination(WAIT)).isTrue();
        assertThat(first.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.HALTED);
        await().atMost(WAIT).until(() -> Checkpoints.of(store).get("sub-halting", Partition.WHOLE)
                .equals(Optional.of(appended.firstPosition())));

        List<String> seen = new CopyOnWriteArrayList<>();
        ProcessingApp second = ProcessingApp.builder().processor("p", source("halting"), Concurrency.serial(), m -> {
            seen.add(m.id());
            return AckDecision.ok();
        }).build().start();
        await().atMost(WAIT).until(() -> seen.size() == 2);
        second.stop();
        assertThat(seen).containsExactly(appended.eventIds().get(1).toString(), appended.eventIds().get(2).toString());
    }

    @Test
    void a_failed_processor_stops_its_subscription_at_once_and_the_event_comes_back_on_restart() throws Exception {
        var appended = store.append("failing-1", ExpectedVersion.noStream(),
                IntStream.range(0, 2).mapToObj(i -> EventData.json("E" + i, "{}")).toList());
        SubscriptionSource failing = source("failing");
        ProcessingApp first = ProcessingApp.builder().processor("p", failing, Concurrency.serial(), m -> {
            throw new OutOfMemoryError("test: the processor fails");
        }).build().start();
        assertThat(first.awaitTermination(WAIT)).isTrue();
        assertThat(first.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.FAILED);
        assertThat(failing.isFinished()).as("stopped without waiting for the event it never finalized").isTrue();

        List<String> seen = new CopyOnWriteArrayList<>();
        ProcessingApp second = ProcessingApp.builder().processor("p", source("failing"), Concurrency.serial(), m -> {
            seen.add(m.id());
            return AckDecision.ok();
        }).build().start();
        await().atMost(WAIT).until(() -> seen.size() == 2);
        second.stop();
        first.stop();
        assertThat(seen).containsExactly(appended.eventIds().get(0).toString(), appended.eventIds().get(1).toString());
    }

    @Test
    void dead_letters_and_envelope_fields_map_onto_the_store() throws Exception {
        var appended = store.append("mapping-7", ExpectedVersion.noStream(), EventData.json("Paid", "{\"amount\":3}")
                .withTraceContext("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", null));
        List<dev.waymark.messaging.Message> seen = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p", source("mapping"), Concurrency.unordered(4), m -> {
            seen.add(m);
            return AckDecision.deadLetter(DeadLetterReason.poison("cannot pay"));
        }).build().start();
        await().atMost(WAIT).until(() -> DeadLetters.of(store).count("sub-mapping") == 1);
        app.stop();
        var envelope = seen.get(0).envelope();
        assertThat(envelope.messageId()).isEqualTo(appended.eventIds().get(0).toString());
        assertThat(envelope.orderingKey()).isEqualTo(MessageKey.ofUtf8("mapping-7"));
        assertThat(envelope.key().asUtf8()).isEqualTo("mapping-7");
        assertThat(envelope.tombstone()).isFalse();
        assertThat(envelope.cursor()).isEqualTo(appended.firstPosition().toString());
        assertThat(envelope.attempt()).isZero();
        assertThat(envelope.traceparent()).startsWith("00-0af7651916cd43dd8448eb211c80319c");
        assertThat(new String(envelope.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"amount\": 3}");
        assertThat(DeadLetters.of(store).list("sub-mapping", Long.MAX_VALUE, 1).get(0).reasonSummary())
                .isEqualTo("poison: cannot pay");
    }

    @Test
    void an_other_dead_letter_keeps_its_detail_in_the_stored_reason_and_one_without_detail_is_stored_too()
            throws Exception {
        store.append("other-1", ExpectedVersion.noStream(), EventData.json("Refund", "{}"));
        store.append("other-2", ExpectedVersion.noStream(), EventData.json("Refund", "{}"));
        ProcessingApp app = ProcessingApp.builder()
                .processor("p", source("other"), Concurrency.serial(),
                        m -> AckDecision.deadLetter(m.envelope().key().asUtf8().equals("other-1")
                                ? DeadLetterReason.other("rejected by the ledger", "account 7 is \"closed\"")
                                : DeadLetterReason.other("rejected by the ledger", null)))
                .build().start();
        try {
            await().atMost(WAIT).until(() -> DeadLetters.of(store).count("sub-other") == 2
                    || app.snapshot().get("p").lifecycle() != ProcessorState.Lifecycle.RUNNING);
            assertThat(app.snapshot().get("p").failure()).as("the subscription kept going").isNull();
        } finally {
            app.stop();
        }
        Map<String, dev.waymark.subscription.DeadLetter> letters = new HashMap<>();
        DeadLetters.of(store).list("sub-other", Long.MAX_VALUE, 10).forEach(l -> letters.put(l.streamName(), l));
        assertThat(letters).containsOnlyKeys("other-1", "other-2");
        assertThat(letters.values()).allSatisfy(l -> {
            assertThat(l.reasonKind()).isEqualTo("other");
            assertThat(l.reasonSummary()).isEqualTo("rejected by the ledger");
        });
        assertThat(letters.get("other-1").reasonJson()).as("the detail, as a JSON string")
                .contains("\"account 7 is \\\"closed\\\"\"");
        assertThat(letters.get("other-2").reasonJson()).as("no detail, as for a reason made on the subscription")
                .isEqualTo("{\"kind\": \"other\", \"summary\": \"rejected by the ledger\"}");
    }
}
