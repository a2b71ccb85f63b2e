package dev.waymark.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.StartPosition;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

/**
 * Subscriptions, side by side in one run: catch-up over N events with a no-op handler against a
 * raw JDBC scan of the same rows; then live latency from append commit to handler with 8 writers
 * at half of their measured maximum rate, the subscriber on a store handle of its own (so wake-ups
 * travel by NOTIFY, as between processes).
 */
public final class SubscriptionBenchmark {

    private static final String PAYLOAD = "{\"order\":\"o-123\",\"amount\":42,\"currency\":\"EUR\"}";

    private SubscriptionBenchmark() {}

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(SubscriptionBenchmark::run);
    }

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        int events = Integer.getInteger("bench.events", 1_000_000);
        int rounds = Integer.getInteger("bench.rounds", 3);
        int seconds = Integer.getInteger("bench.seconds", 10);
        try (BenchDatabase db = BenchDatabase.create();
                HikariDataSource pool = db.pool(16);
                HikariDataSource subscriberPool = db.pool(4);
                EventStore store = EventStore.builder(pool).build();
                EventStore subscriberStore = EventStore.builder(subscriberPool).build()) {
            store.migrate();
            out.setup("subscription benchmark: %s; %d cores; %,d events; %d round(s) after a warm-up round;"
                    + " live phase %d s", db.server(), Runtime.getRuntime().availableProcessors(), events, rounds,
                    seconds);
            long loadStart = System.nanoTime();
            load(store, events);
            out.progress("loaded %,d events in %.1f s", events, (System.nanoTime() - loadStart) / 1e9);

            List<Double> raw = new ArrayList<>();
            List<Double> paged = new ArrayList<>();
            List<Double> subscription = new ArrayList<>();
            // one unrecorded warm-up round for the JIT, then the measured rounds
            rawScan(pool, events);
            pagedRead(subscriberStore, events);
            catchUp(subscriberStore, "warmup", events);
            for (int round = 0; round < rounds; round++) {
                raw.add(rawScan(pool, events));
                paged.add(pagedRead(subscriberStore, events));
                subscription.add(catchUp(subscriberStore, "catchup-" + round, events));
            }
            double r = median(raw);
            double pr = median(paged);
            double s = median(subscription);
            out.println("| catch-up over " + String.format("%,d", events) + " events | ev/s (median of "
                    + rounds + " after a warm-up round) | ratio |");
            out.println("|---|---:|---:|");
            out.printf("| raw JDBC scan (one query, fetch size 1000) | %,.0f | 1.00 |%n", r);
            out.printf("| Waymark category read, pages of 1000 (no subscription) | %,.0f | %.2f |%n", pr, pr / r);
            out.printf("| Waymark subscription, no-op handler, batch 1000 | %,.0f | %.2f |%n%n", s, s / r);
            out.target("3", "catch-up: subscription / raw JDBC scan", s / r, BenchResult.Comparison.AT_LEAST, 0.5, "",
                    "");

            live(out, store, subscriberStore, Duration.ofSeconds(seconds));
        }
    }

    private static void load(EventStore store, int events) throws InterruptedException {
        int threads = 8;
        int perThread = events / threads;
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            writers.add(Thread.ofPlatform().start(() -> {
                List<EventData> batch = IntStream.range(0, 500).mapToObj(i -> EventData.json("Placed", PAYLOAD))
                        .toList();
                for (int done = 0; done < perThread; done += batch.size()) {
                    store.append("bench-" + thread + "-" + (done / 500 % 125), ExpectedVersion.any(),
                            batch.subList(0, Math.min(batch.size(), perThread - done)));
                }
            }));
        }
        for (Thread w : writers) {
            w.join();
        }
    }

    private static double rawScan(HikariDataSource pool, int events) throws Exception {
        long start = System.nanoTime();
        long n = 0;
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false); // a cursor: rows stream in batches of the fetch size
            try (PreparedStatement p = c.prepareStatement("""
                    SELECT e.global_position, e.tx_id::text, e.event_id, s.stream_name, e.stream_version, e.event_type,
                           e.data::text, e.metadata::text, e.causation_id, e.correlation_id, e.created_at
                      FROM waymark.events e JOIN waymark.streams s ON s.stream_id = e.stream_id
                     ORDER BY e.tx_id, e.global_position""")) {
                p.setFetchSize(1000);
                try (ResultSet rs = p.executeQuery()) {
                    while (rs.next()) {
                        rs.getLong(1);
                        rs.getString(2);
                        rs.getObject(3, UUID.class);
                        rs.getString(4);
                        rs.getLong(5);
                        rs.getString(6);
                        rs.getString(7);
                        rs.getString(8);
                        rs.getObject(11, java.time.OffsetDateTime.class);
                        n++;
                    }
                }
            }
            c.commit();
        }
        if (n != events) {
            throw new IllegalStateException("raw scan read " + n + " rows, expected " + events);
        }
        return n / ((System.nanoTime() - start) / 1e9);
    }

    private static double pagedRead(EventStore store, int events) {
        long start = System.nanoTime();
        long n = 0;
        dev.waymark.store.GlobalPosition cursor = dev.waymark.store.GlobalPosition.START;
        for (List<dev.waymark.store.RecordedEvent> page; !(page = store.readCategoryForward("bench", cursor, 1000))
                .isEmpty();) {
            n += page.size();
            cursor = page.get(page.size() - 1).position();
        }
        if (n != events) {
            throw new IllegalStateException("paged read returned " + n + " events, expected " + events);
        }
        return n / ((System.nanoTime() - start) / 1e9);
    }

    private static double catchUp(EventStore store, String name, int events) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        AtomicLong handled = new AtomicLong();
        long start = System.nanoTime();
        Subscription s = Subscription.builder(store, name, Target.category("bench"))
                .batchSize(1000)
                .startFrom(StartPosition.checkpointOrBeginning())
                .start(d -> {
                    if (handled.incrementAndGet() == events) {
                        done.countDown();
                    }
                    return Ack.ok();
                });
        done.await();
        double rate = events / ((System.nanoTime() - start) / 1e9);
        s.stop(Duration.ofSeconds(10));
        return rate;
    }

    private static void live(BenchReport out, EventStore writer, EventStore reader, Duration duration)
            throws Exception {
        int writers = 8;
        double max = Throughput.measure(writers, Duration.ofSeconds(3), (t, i) -> {
            writer.append("maxrate-" + t + "-" + (i % 50), ExpectedVersion.any(), EventData.json("Probe", PAYLOAD));
            return 1;
        });
        double target = max / 2;
        Map<UUID, Long> committedAt = new ConcurrentHashMap<>();
        Map<UUID, Long> receivedAt = new ConcurrentHashMap<>();
        try (Subscription s = Subscription.builder(reader, "live", Target.category("live"))
                .startFrom(StartPosition.checkpointOrEnd())
                .start(d -> {
                    receivedAt.put(d.event().eventId(), System.nanoTime());
                    return Ack.ok();
                })) {
            while (s.position().equals(dev.waymark.store.GlobalPosition.START) && s.isRunning()) {
                Thread.sleep(10); // wait until the subscription has resolved its start at the head
            }
            long intervalNanos = (long) (writers * 1e9 / target);
            List<Thread> threads = new ArrayList<>();
            long end = System.nanoTime() + duration.toNanos();
            for (int t = 0; t < writers; t++) {
                int thread = t;
                threads.add(Thread.ofPlatform().start(() -> {
                    long next = System.nanoTime();
                    for (long i = 0; System.nanoTime() < end; i++) {
                        LockSupport.parkNanos(next - System.nanoTime());
                        next += intervalNanos;
                        var r = writer.append("live-" + thread + "-" + (i % 50), ExpectedVersion.any(),
                                EventData.json("Placed", PAYLOAD));
                        committedAt.put(r.eventIds().get(0), System.nanoTime());
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (receivedAt.size() < committedAt.size() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
        }
        List<Long> latencies = new ArrayList<>();
        for (var e : committedAt.entrySet()) {
            Long received = receivedAt.get(e.getKey());
            if (received == null) {
                throw new IllegalStateException("event " + e.getKey() + " was never delivered");
            }
            latencies.add(Math.max(0, received - e.getValue()));
        }
        Collections.sort(latencies);
        out.printf("| live delivery, %d writers at %,.0f ev/s (half of the measured max %,.0f), %d s | value |%n",
                writers, target, max, duration.toSeconds());
        out.println("|---|---:|");
        out.printf("| events | %,d |%n", latencies.size());
        out.printf("| p50 append-commit to handler | %.1f ms |%n", percentile(latencies, 0.50) / 1e6);
        out.printf("| p99 append-commit to handler | %.1f ms |%n", percentile(latencies, 0.99) / 1e6);
        out.printf("| max | %.1f ms |%n", latencies.get(latencies.size() - 1) / 1e6);
    }

    private static double percentile(List<Long> sorted, double p) {
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.floor(p * sorted.size())));
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
