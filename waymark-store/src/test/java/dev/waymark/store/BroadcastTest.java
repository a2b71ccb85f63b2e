package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Broadcasts between store handles on one schema: a message reaches the listeners of its topic on
 * every handle once (its sender's directly, the others' through NOTIFY), wakes no reader, and a
 * failing or removed listener stops nothing else. The fallback tick is set far beyond the test.
 */
class BroadcastTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final Duration NO_FALLBACK = Duration.ofMinutes(10);
    private static final Duration WITHIN = Duration.ofSeconds(10);
    private static final String PING = "ping ";
    private static final AtomicLong PINGS = new AtomicLong();

    private static EventStore a;
    private static EventStore b;

    @BeforeAll
    static void setUp() {
        a = handle();
        b = handle();
    }

    @AfterAll
    static void tearDown() {
        a.close();
        b.close();
    }

    private static EventStore handle() {
        return EventStore.builder(POSTGRES.newDataSource(2)).fallbackPoll(NO_FALLBACK).build();
    }

    @Test
    void a_message_reaches_each_handle_once_and_wakes_no_reader() {
        List<String> atA = new CopyOnWriteArrayList<>();
        List<String> atB = new CopyOnWriteArrayList<>();
        try (BroadcastRegistration ra = StoreInternals.of(a).onBroadcast("once", atA::add);
                BroadcastRegistration rb = StoreInternals.of(b).onBroadcast("once", atB::add)) {
            awaitListening("once", a, atB);
            awaitListening("once", b, atA);
            long bGeneration = b.wakeSignal().generation();

            StoreInternals.of(a).broadcast("once", "m1");
            StoreInternals.of(a).broadcast("once", "m2");
            assertThat(real(atA)).as("the sender's own listeners hear it at once").containsExactly("m1", "m2");
            await().atMost(WITHIN).until(() -> real(atB).size() == 2);
            assertThat(real(atB)).containsExactly("m1", "m2");

            // NOTIFYs arrive in commit order: once a's LISTEN thread has heard b's reply, it has also
            // heard its own two messages, which must not be delivered a second time
            StoreInternals.of(b).broadcast("once", "reply");
            await().atMost(WITHIN).until(() -> atA.contains("reply"));
            assertThat(real(atA)).containsExactly("m1", "m2", "reply");
            assertThat(b.wakeSignal().generation()).as("a broadcast is no append").isEqualTo(bGeneration);
        }
    }

    @Test
    void topics_are_separate_and_a_removed_listener_hears_nothing_more() {
        List<String> red = new CopyOnWriteArrayList<>();
        List<String> blue = new CopyOnWriteArrayList<>();
        BroadcastRegistration redAtB = StoreInternals.of(b).onBroadcast("red", red::add);
        try (BroadcastRegistration blueAtB = StoreInternals.of(b).onBroadcast("blue", blue::add)) {
            awaitListening("blue", a, blue);
            StoreInternals.of(a).broadcast("red", "r1");
            StoreInternals.of(a).broadcast("blue", "b1");
            await().atMost(WITHIN).until(() -> blue.contains("b1"));
            assertThat(real(red)).containsExactly("r1");
            assertThat(real(blue)).containsExactly("b1");

            redAtB.close();
            redAtB.close(); // idempotent
            StoreInternals.of(a).broadcast("red", "r2");
            StoreInternals.of(a).broadcast("blue", "b2");
            await().atMost(WITHIN).until(() -> blue.contains("b2")); // r2 arrived before b2
            assertThat(real(red)).containsExactly("r1");
        }
    }

    @Test
    void closing_one_registration_of_a_listener_twice_leaves_its_other_registration() {
        List<String> heard = new CopyOnWriteArrayList<>();
        java.util.function.Consumer<String> listener = heard::add; // one object, registered twice
        BroadcastRegistration first = StoreInternals.of(a).onBroadcast("twice", listener);
        try (BroadcastRegistration second = StoreInternals.of(a).onBroadcast("twice", listener)) {
            StoreInternals.of(a).broadcast("twice", "m1"); // the sender's own listeners are called at once, on this thread
            assertThat(heard).containsExactly("m1", "m1");

            first.close();
            first.close(); // idempotent: before, the second close removed the other registration too
            StoreInternals.of(a).broadcast("twice", "m2");
            assertThat(heard).containsExactly("m1", "m1", "m2");
        }
        StoreInternals.of(a).broadcast("twice", "m3");
        assertThat(heard).containsExactly("m1", "m1", "m2");
    }

    @Test
    void a_listener_that_throws_stops_neither_the_others_nor_later_messages() {
        List<String> heard = new CopyOnWriteArrayList<>();
        try (BroadcastRegistration thrower = StoreInternals.of(b).onBroadcast("faulty", m -> {
            throw new StackOverflowError("listener " + m);
        });
                BroadcastRegistration second = StoreInternals.of(b).onBroadcast("faulty", heard::add)) {
            awaitListening("faulty", a, heard);
            StoreInternals.of(a).broadcast("faulty", "x1");
            StoreInternals.of(a).broadcast("faulty", "x2");
            await().atMost(WITHIN).until(() -> real(heard).size() == 2);
            assertThat(real(heard)).containsExactly("x1", "x2");
        }
    }

    @Test
    void a_sender_whose_own_listener_runs_out_of_memory_has_still_told_the_others() {
        List<String> heard = new CopyOnWriteArrayList<>();
        try (BroadcastRegistration dying = StoreInternals.of(a).onBroadcast("oom", m -> {
            if (m.equals("boom")) {
                throw new OutOfMemoryError("listener " + m);
            }
        });
                BroadcastRegistration other = StoreInternals.of(b).onBroadcast("oom", heard::add)) {
            awaitListening("oom", a, heard);
            assertThatThrownBy(() -> StoreInternals.of(a).broadcast("oom", "boom"))
                    .isInstanceOf(OutOfMemoryError.class);
            // before: the error escaped before the NOTIFY was sent, and no other handle heard it
            await().atMost(WITHIN).until(() -> heard.contains("boom"));
        }
    }

    @Test
    void bad_topics_messages_and_listeners_are_refused_by_name() {
        assertThatThrownBy(() -> StoreInternals.of(a).broadcast(" ", "m")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("topic");
        assertThatThrownBy(() -> StoreInternals.of(a).broadcast(null, "m")).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("topic");
        assertThatThrownBy(() -> StoreInternals.of(a).broadcast("t".repeat(StoreInternals.MAX_TOPIC + 1), "m"))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("limit is " + StoreInternals.MAX_TOPIC);
        assertThatThrownBy(
                () -> StoreInternals.of(a).broadcast("t", "m".repeat(StoreInternals.MAX_BROADCAST_MESSAGE + 1)))
                .isInstanceOf(InvalidInputException.class).hasMessageContaining("message");
        assertThatThrownBy(() -> StoreInternals.of(a).broadcast("t", "a\u001Fb"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("control character");
        assertThatThrownBy(() -> StoreInternals.of(a).broadcast("t", "emoji \uD83D"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("surrogate");
        assertThatThrownBy(() -> StoreInternals.of(a).broadcast("t", null)).isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> StoreInternals.of(a).onBroadcast("t", null)).isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("listener");
    }

    /** The messages of a test, without the pings that waited for the LISTEN connections. */
    private static List<String> real(List<String> heard) {
        return heard.stream().filter(m -> !m.startsWith(PING)).toList();
    }

    /**
     * Broadcasts a ping of this call's own from {@code sender} until {@code heard}, a listener of
     * another handle, has it: that handle's LISTEN connection is up. The token is new on every call,
     * so a ping the list already holds (the sender's own listeners hear theirs at once) proves nothing.
     */
    private static void awaitListening(String topic, EventStore sender, List<String> heard) {
        String token = PING + PINGS.incrementAndGet();
        await("the other handle's LISTEN connection is up").atMost(WITHIN).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    StoreInternals.of(sender).broadcast(topic, token);
                    return heard.contains(token);
                });
    }
}
