package dev.waymark.demo;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.AppendResult;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamAppend;
import dev.waymark.store.WakeSignal;
import dev.waymark.store.WrongExpectedVersionException;
import dev.waymark.testkit.KafkaBroker;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The demo: starts an embedded PostgreSQL (or uses {@code --url jdbc:postgresql://...}), migrates
 * a Waymark schema, tours the store, then runs the system scenario (DemoScenario) and checks its invariants.
 * Exits 0 when every check holds.
 */
public final class Demo {

    private static final PrintStream out = System.out;

    private Demo() {}

    /** Runs the demo; {@code --url URL} uses an existing database instead of an embedded one. */
    public static void main(String[] args) throws Exception {
        String url = null;
        String kafka = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--url") && i + 1 < args.length) {
                url = args[++i];
            } else if (args[i].startsWith("--url=")) {
                url = args[i].substring("--url=".length());
            } else if (args[i].equals("--kafka") && i + 1 < args.length) {
                kafka = args[++i];
            } else if (args[i].startsWith("--kafka=")) {
                kafka = args[i].substring("--kafka=".length());
            } else if (!args[i].isBlank()) {
                System.err.println("waymark demo: unknown argument '" + args[i]
                        + "' (usage: Demo [--url=JDBC_URL] [--kafka=BOOTSTRAP_SERVERS])");
                System.exit(2);
            }
        }
        EmbeddedPostgres embedded = null;
        try {
            if (url == null) {
                out.println("[1] starting an embedded PostgreSQL ...");
                embedded = EmbeddedPostgres.builder().start();
                url = "jdbc:postgresql://localhost:" + embedded.getPort() + "/postgres?user=postgres";
            } else {
                out.println("[1] using the database at " + url);
            }
            boolean embeddedKafka = kafka == null;
            if (embeddedKafka) {
                out.println("[1] starting an embedded Kafka broker (one KRaft node, in this JVM) ...");
                kafka = quietly(() -> KafkaBroker.get().bootstrapServers());
            } else {
                out.println("[1] using the Kafka cluster at " + kafka);
            }
            int failures;
            try {
                failures = run(url, kafka);
            } catch (Exception e) {
                System.err.println("waymark demo: " + e.getMessage());
                e.printStackTrace();
                failures = 1;
            }
            out.println(failures == 0 ? "demo finished: every check held" : "demo FAILED: " + failures + " check(s)");
            if (embeddedKafka) {
                quietly(() -> {
                    KafkaBroker.get().close(); // before exit, so its shutdown does not race the JVM's
                    return null;
                });
            }
            System.exit(failures == 0 ? 0 : 1);
        } finally {
            if (embedded != null) {
                close(embedded);
            }
        }
    }

    /** Runs {@code work} with the JVM's standard output and error silenced (the broker's formatter prints). */
    private static <T> T quietly(java.util.concurrent.Callable<T> work) throws Exception {
        PrintStream stdout = System.out;
        PrintStream stderr = System.err;
        PrintStream nowhere = new PrintStream(java.io.OutputStream.nullOutputStream());
        System.setOut(nowhere);
        System.setErr(nowhere);
        try {
            return work.call();
        } finally {
            System.setOut(stdout);
            System.setErr(stderr);
        }
    }

    private static void close(EmbeddedPostgres embedded) {
        try {
            embedded.close();
        } catch (IOException e) {
            System.err.println("waymark demo: stopping embedded PostgreSQL failed: " + e);
        }
    }

    /**
     * Runs the store tour and the system scenario against the database at {@code url} (its schema
     * {@code waymark_demo} is dropped and re-created) and the Kafka cluster at {@code kafka} (fresh
     * topics per run); returns the number of failed checks.
     */
    static int run(String url, String kafka) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(8);
        config.setPoolName("waymark-demo");
        int failures = 0;
        try (HikariDataSource dataSource = new HikariDataSource(config);
                EventStore store = EventStore.builder(dataSource).schema("waymark_demo").build()) {
            try (var c = dataSource.getConnection(); var st = c.createStatement()) {
                st.execute("DROP SCHEMA IF EXISTS waymark_demo CASCADE"); // the demo's own schema: start clean
            }
            int applied = store.migrations().migrate();
            out.println("[2] schema \"waymark_demo\" migrated (" + applied + " migration(s) applied, version "
                    + store.migrations().currentVersion() + ")");

            String run = Long.toString(System.currentTimeMillis(), 36);
            List<String> orders = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                String stream = "cart-" + run + "-" + i;
                orders.add(stream);
                AppendResult r = store.append(stream, ExpectedVersion.noStream(), List.of(
                        EventData.of("CartOpened", Map.of("cart", stream, "total", 10 * i)),
                        EventData.of("CartPaid", Map.of("cart", stream))));
                out.printf("[3] appended 2 events to %s -> version %d at %s%n", stream, r.streamVersion(),
                        r.lastPosition());
            }

            List<AppendResult> multi = store.appendMultiStream(List.of(
                    StreamAppend.of(orders.get(0), ExpectedVersion.exactly(2),
                            List.of(EventData.of("CartCheckedOut", Map.of("cart", orders.get(0))))),
                    StreamAppend.of("receipt-" + run, ExpectedVersion.noStream(),
                            List.of(EventData.of("ReceiptIssued", Map.of("cart", orders.get(0)))))));
            out.println("[4] atomic two-stream append: " + multi.stream()
                    .map(r -> r.streamName() + "@v" + r.streamVersion()).toList());

            try {
                store.append(orders.get(1), ExpectedVersion.exactly(7), EventData.of("CartPaid", Map.of()));
                out.println("    CHECK FAILED: a stale expected version was accepted");
                failures++;
            } catch (WrongExpectedVersionException e) {
                out.println("[5] optimistic concurrency works: " + e.getMessage());
            }

            List<RecordedEvent> stream = store.readStreamForward(orders.get(0), 0, 100);
            out.println("[6] " + orders.get(0) + " reads back: " + stream.stream()
                    .map(e -> e.streamVersion() + ":" + e.type()).toList());
            failures += check(stream.size() == 3, "the first cart has 3 events");

            // Category and all-stream reads stop at the visibility horizon: while another transaction
            // on the server that began before these appends is still open (another application, a
            // test running beside the demo), the newest events are not readable yet. Wait for it.
            long inCategory = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            for (WakeSignal wake = store.wakeSignal();;) {
                long generation = wake.generation();
                inCategory = store.categoryForward("cart", GlobalPosition.START, 100)
                        .filter(e -> e.streamName().contains(run)).count();
                if (inCategory >= 11 || System.nanoTime() > deadline) {
                    break;
                }
                wake.awaitAfter(generation, Duration.ofMillis(100));
            }
            out.println("[7] category 'cart' holds " + inCategory + " events of this run");
            failures += check(inCategory == 11, "the cart category has 11 events of this run");

            List<RecordedEvent> all = store.allForward(GlobalPosition.START, 100).toList();
            boolean ordered = true;
            for (int i = 1; i < all.size(); i++) {
                ordered &= all.get(i - 1).position().compareTo(all.get(i).position()) < 0;
            }
            out.println(
                    "[8] all streams: " + all.size() + " events in global order (head " + store.headPosition() + ")");
            failures += check(ordered, "the global order is strictly increasing");

            WakeSignal signal = store.wakeSignal();
            long seen = signal.generation();
            store.append(orders.get(2), ExpectedVersion.streamExists(), EventData.of("CartNoted", Map.of()));
            long woke = signal.awaitAfter(seen, Duration.ofSeconds(5));
            out.println("[9] a reader waiting on the wake signal woke after the append (generation " + seen + " -> "
                    + woke + ")");
            failures += check(woke > seen, "the wake signal fired");

            failures += new DemoScenario(out, url, store, kafka).run();
        }
        return failures;
    }

    private static int check(boolean ok, String what) {
        if (!ok) {
            out.println("    CHECK FAILED: " + what);
        }
        return ok ? 0 : 1;
    }
}
