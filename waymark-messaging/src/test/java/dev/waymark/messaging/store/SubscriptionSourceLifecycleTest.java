package dev.waymark.messaging.store;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.core.RetryPolicy;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How a processor over a {@link SubscriptionSource} ends: a stop or a halt that comes while the
 * processor's ingester is waiting in {@code poll} is an end, not a source failure; and a decision the
 * subscription cannot record is never taken for a finalized one.
 */
class SubscriptionSourceLifecycleTest {

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
                .retry(RetryPolicy.fixed(2, Duration.ZERO)).checkpointEvery(1, Duration.ZERO));
    }

    private static ProcessorState.Lifecycle lifecycle(ProcessingApp app) {
        return app.snapshot().get("p").lifecycle();
    }

    @Test
    void stopping_a_concurrent_processor_waiting_for_events_ends_it_stopped_not_failed() {
        for (int i = 0; i < 5; i++) {
            ProcessingApp app = ProcessingApp.builder()
                    .processor("p", source("idle" + i), Concurrency.unordered(2), m -> AckDecision.ok())
                    .build().start();
            await().atMost(WAIT).until(() -> lifecycle(app) == ProcessorState.Lifecycle.RUNNING);
            // the ingester waits in poll (an empty category) when the stop closes the subscription;
            // before: that poll threw "subscription ... has stopped" and the processor ended FAILED
            app.stop();
            assertThat(lifecycle(app)).as("round %d", i).isEqualTo(ProcessorState.Lifecycle.STOPPED);
        }
    }

    @Test
    void a_halt_in_a_concurrent_processor_ends_it_halted_not_failed() throws Exception {
        store.append("halts-1", ExpectedVersion.noStream(),
                IntStream.range(0, 3).mapToObj(i -> EventData.json("E" + i, "{}")).toList());
        ProcessingApp app = ProcessingApp.builder()
                .processor("p", source("halts"), Concurrency.unordered(2), m -> AckDecision.halt("cannot go on"))
                .build().start();
        assertThat(app.awaitTermination(WAIT)).isTrue();
        assertThat(lifecycle(app)).isEqualTo(ProcessorState.Lifecycle.HALTED);
        app.stop();
    }

    @Test
    void a_dead_letter_with_a_blank_summary_is_a_handler_error_and_the_subscription_goes_on() {
        var appended = store.append("blank-1", ExpectedVersion.noStream(),
                List.of(EventData.json("Bad", "{}"), EventData.json("Good", "{}")));
        List<String> seen = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p", source("blank"), Concurrency.serial(), m -> {
            seen.add(m.id());
            return m.id().equals(appended.eventIds().get(0).toString())
                    ? AckDecision.deadLetter(DeadLetterReason.other(" ", null))
                    : AckDecision.ok();
        }).build().start();
        try {
            // before: the source's handle counted as done before the subscription refused the reason,
            // the runtime's next attempt returned at once, and the subscription waited for ever
            await().atMost(WAIT).until(() -> seen.contains(appended.eventIds().get(1).toString()));
            assertThat(DeadLetters.of(store).list("sub-blank", Long.MAX_VALUE, 10)).singleElement()
                    .satisfies(l -> assertThat(l.reasonKind()).isEqualTo("max_attempts"));
        } finally {
            app.stop();
        }
    }
}
