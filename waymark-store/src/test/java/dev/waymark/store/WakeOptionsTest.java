package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The effect of the wake-up options, observed from outside: the fallback tick wakes a waiter nobody
 * notifies, the notify window coalesces a burst of appends into few NOTIFYs (counted by a plain
 * JDBC listener on the channel), a handle with notifications off sends none, and a LISTEN
 * connection that cannot be had is retried after a doubling, capped delay.
 */
class WakeOptionsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final String CHANNEL = "waymark_waymark";

    private static HikariDataSource pool;

    @BeforeAll
    static void setUp() {
        pool = POSTGRES.newDataSource(4);
    }

    @AfterAll
    static void tearDown() {
        pool.close();
    }

    @Test
    void a_waiter_nobody_notifies_is_woken_by_the_fallback_tick_at_its_pace() throws Exception {
        try (EventStore handle = EventStore.builder(pool).fallbackPoll(Duration.ofMillis(200)).build()) {
            WakeSignal signal = handle.wakeSignal();
            // the first wait may end at the LISTEN connection's first connect (which wakes everyone)
            signal.awaitAfter(signal.generation(), Duration.ofSeconds(30));
            long started = System.nanoTime();
            for (int i = 0; i < 10; i++) {
                long seen = signal.generation();
                // nothing is appended: only a tick can wake it before its 30 s timeout
                assertThat(signal.awaitAfter(seen, Duration.ofSeconds(30))).isGreaterThan(seen);
            }
            Duration tenTicks = Duration.ofNanos(System.nanoTime() - started);
            // ticks are at least 200 ms apart; at the default 1 s pace ten would take 9 s or more
            assertThat(tenTicks).isGreaterThanOrEqualTo(Duration.ofMillis(1800)).isLessThan(Duration.ofSeconds(6));
        }
    }

    @Test
    void a_handle_with_notifications_off_is_still_woken_by_its_fallback_tick() throws Exception {
        try (EventStore quiet = EventStore.builder(pool).notifications(false).fallbackPoll(Duration.ofMillis(200))
                .build()) {
            WakeSignal signal = quiet.wakeSignal();
            for (int i = 0; i < 3; i++) {
                long seen = signal.generation();
                // nothing is appended and nothing notifies: only a tick can wake it before 10 s
                // (before: the tick ran only on the LISTEN thread, which notifications off never start)
                assertThat(signal.awaitAfter(seen, Duration.ofSeconds(10))).as("woken by the tick").isGreaterThan(seen);
            }
        }
    }

    @Test
    void the_notify_window_coalesces_a_burst_of_appends_into_few_notifications() throws Exception {
        try (Connection listening = POSTGRES.dataSource().getConnection();
                EventStore writer = EventStore.builder(pool).notifyWindow(Duration.ofMillis(200)).build()) {
            listen(listening);
            long started = System.nanoTime();
            for (int i = 0; i < 60; i++) {
                writer.append("burst-" + i, ExpectedVersion.any(), events(1)); // a commit each
            }
            long elapsedMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
            List<String> received = new ArrayList<>();
            // the last window's NOTIFY goes out up to 200 ms after the last append
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                List<String> more = notifications(listening, 400); // until 400 ms pass without one
                received.addAll(more);
                return !received.isEmpty() && more.isEmpty();
            });
            assertThat(received).hasSizeLessThanOrEqualTo((int) (elapsedMillis / 200) + 2);
        }
    }

    @Test
    void a_handle_with_notifications_off_sends_none_and_one_with_them_on_does() throws Exception {
        try (Connection listening = POSTGRES.dataSource().getConnection();
                EventStore quiet = EventStore.builder(pool).notifications(false).build();
                EventStore loud = EventStore.builder(pool).notifyWindow(Duration.ofMillis(1)).build()) {
            listen(listening);
            quiet.append("quiet-1", ExpectedVersion.any(), events(1));
            // the writer wakes its own waiters either way
            WakeSignal own = quiet.wakeSignal();
            long seen = own.generation();
            quiet.append("quiet-2", ExpectedVersion.any(), events(1));
            assertThat(own.awaitAfter(seen, Duration.ZERO)).isGreaterThan(seen);
            loud.append("loud-1", ExpectedVersion.any(), events(1));
            // the loud handle's NOTIFY arrives; none arrived before it from the quiet one's appends
            List<String> received = new ArrayList<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                List<String> more = notifications(listening, 400); // until 400 ms pass without one
                received.addAll(more);
                return !received.isEmpty() && more.isEmpty();
            });
            assertThat(received).hasSize(1);
        }
    }

    @Test
    void the_listen_connection_is_retried_after_a_doubling_delay_up_to_its_cap() throws Exception {
        List<Long> attempts = new java.util.concurrent.CopyOnWriteArrayList<>();
        javax.sql.DataSource failingFourTimes = dev.waymark.testkit.FailingDataSource.failing(pool, () -> {
            if (!Thread.currentThread().getName().startsWith("waymark-listen-")) {
                return false;
            }
            attempts.add(System.nanoTime());
            return attempts.size() <= 4;
        }, () -> new AssertionError("injected: the database refuses the LISTEN connection"));
        try (EventStore handle = EventStore.builder(failingFourTimes)
                .reconnectBackoff(Duration.ofMillis(200), Duration.ofMillis(400)).build()) {
            WakeSignal signal = handle.wakeSignal();
            signal.awaitAfter(signal.generation(), Duration.ZERO); // starts the listener
            await().atMost(Duration.ofSeconds(20)).until(() -> attempts.size() >= 5); // the fifth connects
        }
        List<Duration> gaps = new ArrayList<>();
        for (int i = 1; i < 5; i++) {
            gaps.add(Duration.ofNanos(attempts.get(i) - attempts.get(i - 1)));
        }
        // 200, 400, then capped at 400 (uncapped: 800, then 1600, which the last bound tells apart)
        assertThat(gaps.get(0)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        assertThat(gaps.get(1)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
        assertThat(gaps.get(2)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
        assertThat(gaps.get(3)).isGreaterThanOrEqualTo(Duration.ofMillis(400)).isLessThan(Duration.ofMillis(1400));
    }

    private static void listen(Connection connection) throws Exception {
        try (Statement s = connection.createStatement()) {
            s.execute("LISTEN " + CHANNEL);
        }
    }

    /** The notifications that arrive within {@code waitMillis}, as their payloads. */
    private static List<String> notifications(Connection connection, int waitMillis) throws Exception {
        PGNotification[] got = connection.unwrap(PGConnection.class).getNotifications(waitMillis);
        List<String> payloads = new ArrayList<>();
        if (got != null) {
            for (PGNotification n : got) {
                payloads.add(n.getParameter());
            }
        }
        return payloads;
    }
}
