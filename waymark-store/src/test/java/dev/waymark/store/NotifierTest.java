package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.internal.ListenerNames;
import dev.waymark.store.internal.Notifier;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.testkit.FreezingProxy;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DESIGN decision 2: a waiter in one store handle wakes after a commit in another handle, through
 * LISTEN/NOTIFY alone (the fallback tick is set far beyond the test), and keeps working after its
 * LISTEN backend is terminated.
 */
class NotifierTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static final Duration NO_FALLBACK = Duration.ofMinutes(10);
    private static final Duration WAKE_WITHIN = Duration.ofSeconds(5);

    private static EventStore writer;
    private static EventStore listener;
    /** The writer handle's own LISTEN backend: never the one these tests look at or terminate. */
    private static int writerPid;

    @BeforeAll
    static void setUp() throws SQLException {
        writer = EventStore.builder(POSTGRES.newDataSource(4)).build();
        writer.wakeSignal(); // starts its LISTEN backend now, before the listener handle exists
        writerPid = awaitListening(); // the only LISTEN backend so far: never the one these tests look at
        listener = EventStore.builder(POSTGRES.newDataSource(4)).fallbackPoll(NO_FALLBACK)
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build();
    }

    @AfterAll
    static void tearDown() {
        writer.close();
        listener.close();
    }

    @Test
    void a_waiter_wakes_after_a_commit_in_another_store_handle() throws Exception {
        WakeSignal signal = listener.wakeSignal();
        awaitListening();
        for (int round = 0; round < 3; round++) {
            assertWokenByAppendFromOtherHandle(signal, "wake-" + round);
        }
    }

    @Test
    void a_waiter_wakes_at_once_after_a_commit_in_its_own_handle() throws Exception {
        WakeSignal signal = writer.wakeSignal();
        long seen = signal.generation();
        writer.append("self-1", ExpectedVersion.any(), events(1));
        assertThat(signal.awaitAfter(seen, Duration.ZERO)).isGreaterThan(seen);
    }

    @Test
    void the_waiter_keeps_working_after_its_listen_backend_is_terminated() throws Exception {
        WakeSignal signal = listener.wakeSignal();
        int oldPid = awaitListening();

        assertThat(terminate(oldPid)).isTrue();
        await("a new LISTEN backend replaced pid " + oldPid).atMost(Duration.ofSeconds(10))
                .until(() -> {
                    Integer pid = listeningPid(); // read once: the backend may change between two reads
                    return pid != null && pid != oldPid;
                });

        // the first wake may come from the reconnect itself; later rounds can only come from NOTIFY
        for (int round = 0; round < 3; round++) {
            assertWokenByAppendFromOtherHandle(signal, "after-kill-" + round);
        }
        assertThat(((Notifier) signal).reconnects()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void the_listener_goes_on_after_an_error_on_its_thread() throws Exception {
        try (com.zaxxer.hikari.HikariDataSource real = POSTGRES.newDataSource(2)) {
            listenerSurvivesAnError(real);
        }
    }

    private static void listenerSurvivesAnError(javax.sql.DataSource real) throws Exception {
        java.util.concurrent.atomic.AtomicInteger thrown = new java.util.concurrent.atomic.AtomicInteger();
        javax.sql.DataSource failingOnce = dev.waymark.testkit.FailingDataSource.failing(real,
                () -> Thread.currentThread().getName().startsWith("waymark-listen-") && thrown.compareAndSet(0, 1),
                () -> new OutOfMemoryError("injected"));
        try (EventStore handle = EventStore.builder(failingOnce).fallbackPoll(NO_FALLBACK)
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build()) {
            WakeSignal signal = handle.wakeSignal();
            signal.awaitAfter(signal.generation(), Duration.ZERO); // starts the listener, which fails once
            await().atMost(Duration.ofSeconds(10)).until(() -> thrown.get() == 1);
            // before: the error ended the LISTEN thread for good; nothing woke this handle again
            assertWokenByAppendFromOtherHandle(signal, "after-error");
        }
    }

    @Test
    void a_listen_connection_whose_network_path_died_is_replaced() throws Exception {
        // no fallback tick within the test: a wake can only come from a NOTIFY (or the reconnect);
        // the heartbeat runs every 5 s and a read may block 10 s before the connection counts as dead
        try (FreezingProxy proxy = FreezingProxy.inFrontOf(POSTGRES.jdbcUrl());
                HikariDataSource viaProxy = onePool(proxy.via(POSTGRES.jdbcUrl()));
                EventStore handle = EventStore.builder(viaProxy).fallbackPoll(NO_FALLBACK)
                        .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200)).build()) {
            Notifier signal = (Notifier) handle.wakeSignal();
            // listening through the proxy: the first wake may come from the LISTEN connection coming up,
            // the second only from a NOTIFY
            assertWokenByAppendFromOtherHandle(signal, "before-freeze-1");
            assertWokenByAppendFromOtherHandle(signal, "before-freeze-2");
            assertThat(proxy.freezeOpenConnections()).isEqualTo(1);
            // before: the heartbeat's read waited for TCP to give up (a quarter of an hour), and with
            // it every wake of this handle, the fallback tick included
            await("the frozen LISTEN connection was replaced").atMost(Duration.ofSeconds(40))
                    .until(() -> signal.reconnects() >= 1);
            // the first wake may come from the reconnect itself; the second only from a NOTIFY
            assertWokenByAppendFromOtherHandle(signal, "after-freeze-1");
            assertWokenByAppendFromOtherHandle(signal, "after-freeze-2");
        }
    }

    private static HikariDataSource onePool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(1);
        config.setConnectionTimeout(20_000);
        return new HikariDataSource(config);
    }

    @Test
    void a_closed_handle_waits_out_the_timeout_instead_of_returning_at_once() throws Exception {
        WakeSignal signal;
        try (com.zaxxer.hikari.HikariDataSource pool = POSTGRES.newDataSource(2);
                EventStore closing = EventStore.builder(pool).build()) {
            signal = closing.wakeSignal();
        }
        long seen = signal.generation();
        long started = System.nanoTime();
        // before: it returned at once, so a poll loop over a closed handle spun on the CPU
        assertThat(signal.awaitAfter(seen, Duration.ofMillis(300))).isEqualTo(seen);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
    }

    private static void assertWokenByAppendFromOtherHandle(WakeSignal signal, String stream) throws Exception {
        long seen = signal.generation();
        CompletableFuture<Long> woken = CompletableFuture.supplyAsync(() -> {
            try {
                return signal.awaitAfter(seen, WAKE_WITHIN.multipliedBy(2));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        writer.append(stream, ExpectedVersion.any(), events(1));
        assertThat(woken.get(WAKE_WITHIN.toMillis() * 3, TimeUnit.MILLISECONDS))
                .as("woken by the other handle's NOTIFY").isGreaterThan(seen);
    }

    @Test
    void the_listen_connection_keeps_the_application_name_and_adds_waymarks_role() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(POSTGRES.jdbcUrl());
        config.setMaximumPoolSize(2);
        config.addDataSourceProperty("ApplicationName", "billing-service");
        try (HikariDataSource named = new HikariDataSource(config);
                EventStore handle = EventStore.builder(named).fallbackPoll(NO_FALLBACK).build()) {
            handle.wakeSignal().awaitAfter(handle.wakeSignal().generation(), Duration.ofMillis(1)); // starts LISTEN
            await("the named LISTEN backend").atMost(Duration.ofSeconds(10)).until(() -> countListening(
                    "billing-service/" + ListenerNames.LISTENER_APPLICATION_NAME) == 1);
        }
        // without a name of the application's (pgjdbc's default), the role alone; long names keep the role
        assertThat(ListenerNames.listenerApplicationName("PostgreSQL JDBC Driver")).isEqualTo("waymark-listener");
        assertThat(ListenerNames.listenerApplicationName(null)).isEqualTo("waymark-listener");
        assertThat(ListenerNames.listenerApplicationName("x".repeat(80))).hasSize(63).endsWith("/waymark-listener");
    }

    private static int countListening(String applicationName) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                java.sql.PreparedStatement s = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                        + " WHERE application_name = ? AND datname = current_database() AND query LIKE 'LISTEN%'")) {
            s.setString(1, applicationName);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static int awaitListening() throws SQLException {
        await("the listener's LISTEN backend is up").atMost(Duration.ofSeconds(10)).until(() -> listeningPid() != null);
        return listeningPid();
    }

    private static Integer listeningPid() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pid FROM pg_stat_activity WHERE application_name = '"
                        + ListenerNames.LISTENER_APPLICATION_NAME + "' AND datname = current_database()"
                        + " AND query LIKE 'LISTEN%' AND pid <> " + writerPid
                        + " ORDER BY backend_start DESC LIMIT 1")) {
            return rs.next() ? rs.getInt(1) : null;
        }
    }

    private static boolean terminate(int pid) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_terminate_backend(" + pid + ")")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
