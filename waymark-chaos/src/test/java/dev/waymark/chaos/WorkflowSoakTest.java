package dev.waymark.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.testkit.PostgresExtension;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The workflow soak of issue 33, test-suite sized: three worker JVMs ({@link SoakWorker}) in a sharded
 * pool whose handler starts one workflow per event (a step, a 100 ms durable sleep, an awakeable
 * completed by another process, two steps), {@value #RATE} events/s offered for {@link #INTAKE}, one of
 * workers 1 and 2 SIGKILLed (and restarted) every {@link #KILL_EVERY}. Then: every event handled,
 * every workflow completed with each of its steps done, and the process never killed shows no growth
 * of its threads or its connections.
 */
class WorkflowSoakTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    static final int RATE = 40;
    static final Duration INTAKE = Duration.ofSeconds(60);
    static final Duration KILL_EVERY = Duration.ofSeconds(15);
    static final Duration DRAIN = Duration.ofSeconds(150);

    private final Process[] workers = new Process[3];
    private final AtomicInteger[] threads = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
    private final AtomicInteger generation = new AtomicInteger();

    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void every_event_is_handled_and_every_workflow_completes_while_workers_are_killed() throws Exception {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            store.migrate();
            sql("CREATE TABLE soak_handled (event_id uuid PRIMARY KEY, pid bigint)");
            sql("CREATE TABLE soak_effects (workflow text, step text)");
            sql("CREATE TABLE soak_awakeables (awakeable_id uuid PRIMARY KEY, workflow text, pid bigint,"
                    + " taken_at timestamptz, done_at timestamptz, done_by bigint)");
            for (int i = 0; i < 3; i++) {
                start(i);
            }
            java.util.concurrent.atomic.AtomicInteger kills = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicBoolean intakeDone = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicReference<Exception> killerFailed = new java.util.concurrent.atomic.AtomicReference<>();
            Thread killer = Thread.ofPlatform().name("soak-killer").start(() -> {
                try {
                    while (!intakeDone.get()) {
                        LockSupport.parkNanos(KILL_EVERY.toNanos()); // the fault schedule
                        if (intakeDone.get()) {
                            return;
                        }
                        int slot = 1 + kills.getAndIncrement() % 2;
                        workers[slot].destroyForcibly(); // SIGKILL: no lease released, no shutdown hook
                        workers[slot].waitFor(30, TimeUnit.SECONDS);
                        start(slot);
                    }
                } catch (Exception e) {
                    killerFailed.set(e);
                }
            });
            int events = 0;
            int threadsEarly = -1;
            long connectionsEarly = -1;
            java.util.concurrent.atomic.AtomicInteger appended = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.ExecutorService appenders = java.util.concurrent.Executors.newFixedThreadPool(4);
            long t0 = System.nanoTime();
            while (System.nanoTime() - t0 < INTAKE.toNanos()) {
                long due = t0 + events * 1_000_000_000L / RATE;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait); // pacing the offered rate
                }
                int n = events++;
                appenders.execute(() -> {
                    store.append(SoakWorker.CATEGORY + "-" + (n % 97), ExpectedVersion.any(),
                            List.of(EventData.json("Ordered", "{\"n\":" + n + "}")));
                    appended.incrementAndGet();
                });
                if (threadsEarly < 0 && System.nanoTime() - t0 > INTAKE.toNanos() / 4) {
                    threadsEarly = threads[0].get();
                    connectionsEarly = connections("soak-w0-%");
                }
            }
            appenders.shutdown();
            assertThat(appenders.awaitTermination(60, TimeUnit.SECONDS)).as("appends done").isTrue();
            intakeDone.set(true);
            killer.join(120_000);
            assertThat(killerFailed.get()).as("the killer's failure").isNull();
            assertThat(appended.get()).isEqualTo(events);
            int offered = events;
            System.out.println("[soak] offered " + offered + " events in " + INTAKE.toSeconds() + " s, " + kills.get()
                    + " kills");
            assertThat(kills.get()).as("workers killed").isGreaterThanOrEqualTo(2);
            await("every event handled").atMost(DRAIN).pollInterval(Duration.ofMillis(500))
                    .until(() -> count("SELECT count(*) FROM soak_handled") == offered);
            await("every workflow completed").atMost(DRAIN).pollInterval(Duration.ofMillis(500))
                    .until(() -> count("SELECT count(*) FROM waymark.workflows WHERE name = 'soak_flow'"
                            + " AND status = 'completed'") == offered);
            assertThat(count("SELECT count(*) FROM waymark.workflows WHERE name = 'soak_flow'")).isEqualTo(offered);
            for (String step : List.of("first", "second", "third")) {
                assertThat(count("SELECT count(DISTINCT workflow) FROM soak_effects WHERE step = '" + step + "'"))
                        .as("workflows whose step %s ran", step).isEqualTo(offered);
            }
            assertThat(count("SELECT count(*) FROM soak_awakeables a JOIN waymark.workflows w ON w.id = a.workflow"
                    + " WHERE a.pid = a.done_by")).as("awakeables completed by the process that published them")
                    .isZero();
            int threadsLate = threads[0].get();
            long connectionsLate = connections("soak-w0-%");
            System.out.println("[soak] worker 0 threads " + threadsEarly + " -> " + threadsLate + ", connections "
                    + connectionsEarly + " -> " + connectionsLate + "; all connections " + connections("%"));
            assertThat(threadsLate).as("threads of the worker never killed").isLessThanOrEqualTo(threadsEarly + 10);
            assertThat(connectionsLate).as("connections of the worker never killed").isLessThanOrEqualTo(10);
            assertThat(connections("soak-%")).as("connections of all workers (3 pools of 10)").isLessThanOrEqualTo(30);
        } finally {
            for (Process p : workers) {
                if (p != null) {
                    p.destroyForcibly();
                }
            }
        }
    }

    private void start(int slot) throws IOException, InterruptedException {
        String label = "w" + slot + "-" + generation.incrementAndGet();
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                SoakWorker.class.getName(), POSTGRES.jdbcUrl(), label).redirectErrorStream(true).start();
        CompletableFuture<Void> ready = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("soak-relay-" + label).start(() -> {
            try (BufferedReader r = new BufferedReader(
                    new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    if (line.startsWith("ready ")) {
                        ready.complete(null);
                    } else if (line.startsWith("stats threads ")) {
                        threads[slot].set(Integer.parseInt(line.substring(14).trim()));
                    } else {
                        System.out.println("[" + label + "] " + line);
                    }
                }
            } catch (IOException e) {
                // the process is gone
            }
            ready.completeExceptionally(new IOException("worker " + label + " exited"));
        });
        try {
            ready.get(90, TimeUnit.SECONDS);
        } catch (Exception e) {
            p.destroyForcibly();
            throw new IOException("soak worker " + label + " did not start: " + e.getMessage(), e);
        }
        workers[slot] = p;
        await("first stats of " + label).atMost(Duration.ofSeconds(30)).until(() -> threads[slot].get() > 0);
    }

    private static long connections(String applicationNameLike) throws SQLException {
        return count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                + " AND application_name LIKE '" + applicationNameLike + "'");
    }

    private static long count(String query) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(query)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void sql(String statement) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }
}
