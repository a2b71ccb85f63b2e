package dev.waymark.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;

/**
 * Append throughput, side by side in one run on one database: (a) raw single-row INSERT commits,
 * (b) a counter-row design (one statement increments a single counter row and inserts), (c)
 * Waymark single-event appends, each with 1 and 8 writers; then 100-event batches against a raw
 * multi-row insert. Measurements are interleaved over several rounds and the median is reported.
 */
public final class AppendBenchmark {

    private static final String PAYLOAD =
            "{\"order\":\"o-123\",\"amount\":42,\"currency\":\"EUR\",\"lines\":[{\"sku\":\"a-1\",\"qty\":2}]}";
    private static final int BATCH = 100;

    private AppendBenchmark() {}

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        Duration duration = Duration.ofSeconds(Long.getLong("bench.seconds", 3));
        int rounds = Integer.getInteger("bench.rounds", 3);
        try (BenchDatabase db = BenchDatabase.create(); HikariDataSource pool = db.pool(16)) {
            createBaselineTables(pool);
            try (EventStore store = EventStore.builder(pool).notifications(false).build()) {
                store.migrate();
                System.out.printf("append benchmark: %s; %d cores; %d round(s) of %d s per cell, median%n%n",
                        db.server(), Runtime.getRuntime().availableProcessors(), rounds, duration.toSeconds());
                Map<String, List<Double>> results = new LinkedHashMap<>();
                for (int round = 0; round < rounds; round++) {
                    for (int writers : new int[] {1, 8}) {
                        record(results, "raw/" + writers, Throughput.measure(writers, duration, rawInsert(pool)));
                        record(results, "counter/" + writers, Throughput.measure(writers, duration, counterRow(pool)));
                        record(results, "waymark/" + writers, Throughput.measure(writers, duration, waymark(store, 1)));
                        record(results, "rawbatch/" + writers,
                                Throughput.measure(writers, duration, rawBatch(pool)));
                        record(results, "waymarkbatch/" + writers,
                                Throughput.measure(writers, duration, waymark(store, BATCH)));
                    }
                    System.out.printf("round %d done%n", round + 1);
                }
                print(results);
            }
        }
    }

    private static void record(Map<String, List<Double>> results, String key, double value) {
        results.computeIfAbsent(key, k -> new ArrayList<>()).add(value);
    }

    private static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted[sorted.length / 2];
    }

    private static void print(Map<String, List<Double>> results) {
        System.out.println();
        System.out.println("| writers | (a) raw INSERT ev/s | (b) counter row ev/s | (c) Waymark ev/s | (c)/(a) | (c)/(b) |");
        System.out.println("|---:|---:|---:|---:|---:|---:|");
        for (int writers : new int[] {1, 8}) {
            double a = median(results.get("raw/" + writers));
            double b = median(results.get("counter/" + writers));
            double c = median(results.get("waymark/" + writers));
            System.out.printf("| %d | %,.0f | %,.0f | %,.0f | %.2f | %.2f |%n", writers, a, b, c, c / a, c / b);
        }
        System.out.println();
        System.out.println("| writers | raw multi-row INSERT of 100 ev/s | Waymark 100-event append ev/s | ratio |");
        System.out.println("|---:|---:|---:|---:|");
        for (int writers : new int[] {1, 8}) {
            double raw = median(results.get("rawbatch/" + writers));
            double waymark = median(results.get("waymarkbatch/" + writers));
            System.out.printf("| %d | %,.0f | %,.0f | %.2f |%n", writers, raw, waymark, waymark / raw);
        }
    }

    private static void createBaselineTables(HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("""
                    CREATE TABLE raw_events (
                      global_position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                      event_id uuid NOT NULL UNIQUE, stream_name text NOT NULL, stream_version bigint NOT NULL,
                      event_type text NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())
                    """);
            s.execute("CREATE TABLE counter (id int PRIMARY KEY, value bigint NOT NULL)");
            s.execute("INSERT INTO counter VALUES (1, 0)");
            s.execute("""
                    CREATE TABLE counter_events (
                      global_position bigint PRIMARY KEY,
                      event_id uuid NOT NULL UNIQUE, stream_name text NOT NULL, stream_version bigint NOT NULL,
                      event_type text NOT NULL, data jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())
                    """);
        }
    }

    private static Throughput.Op rawInsert(HikariDataSource pool) {
        return (thread, i) -> {
            try (Connection c = pool.getConnection();
                    PreparedStatement p = c.prepareStatement("INSERT INTO raw_events"
                            + " (event_id, stream_name, stream_version, event_type, data) VALUES (?, ?, ?, ?, ?::jsonb)")) {
                p.setObject(1, UUID.randomUUID());
                p.setString(2, "bench" + thread + "-" + (i % 100));
                p.setLong(3, i);
                p.setString(4, "OrderPlaced");
                p.setString(5, PAYLOAD);
                p.executeUpdate();
            }
            return 1;
        };
    }

    private static Throughput.Op counterRow(HikariDataSource pool) {
        return (thread, i) -> {
            try (Connection c = pool.getConnection();
                    PreparedStatement p = c.prepareStatement("""
                            WITH c AS (UPDATE counter SET value = value + 1 WHERE id = 1 RETURNING value)
                            INSERT INTO counter_events (global_position, event_id, stream_name, stream_version, event_type, data)
                            SELECT value, ?, ?, ?, ?, ?::jsonb FROM c
                            """)) {
                p.setObject(1, UUID.randomUUID());
                p.setString(2, "bench" + thread + "-" + (i % 100));
                p.setLong(3, i);
                p.setString(4, "OrderPlaced");
                p.setString(5, PAYLOAD);
                p.executeUpdate();
            }
            return 1;
        };
    }

    private static Throughput.Op rawBatch(HikariDataSource pool) {
        return (thread, i) -> {
            try (Connection c = pool.getConnection();
                    PreparedStatement p = c.prepareStatement("INSERT INTO raw_events"
                            + " (event_id, stream_name, stream_version, event_type, data)"
                            + " SELECT * FROM unnest(?::uuid[], ?::text[], ?::bigint[], ?::text[], ?::text[]::jsonb[])")) {
                UUID[] ids = IntStream.range(0, BATCH).mapToObj(k -> UUID.randomUUID()).toArray(UUID[]::new);
                String[] streams = new String[BATCH];
                Arrays.fill(streams, "bench" + thread + "-" + (i % 100));
                Long[] versions = IntStream.range(0, BATCH).mapToObj(k -> i * BATCH + k).toArray(Long[]::new);
                String[] types = new String[BATCH];
                Arrays.fill(types, "OrderPlaced");
                String[] data = new String[BATCH];
                Arrays.fill(data, PAYLOAD);
                p.setArray(1, c.createArrayOf("uuid", ids));
                p.setArray(2, c.createArrayOf("text", streams));
                p.setArray(3, c.createArrayOf("int8", versions));
                p.setArray(4, c.createArrayOf("text", types));
                p.setArray(5, c.createArrayOf("text", data));
                p.executeUpdate();
            }
            return BATCH;
        };
    }

    private static Throughput.Op waymark(EventStore store, int batch) {
        List<EventData> events = IntStream.range(0, batch).mapToObj(k -> EventData.json("OrderPlaced", PAYLOAD)).toList();
        return (thread, i) -> {
            store.append("bench" + thread + "-" + (i % 100), ExpectedVersion.any(), events);
            return batch;
        };
    }
}
