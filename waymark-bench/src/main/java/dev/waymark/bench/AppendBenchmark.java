package dev.waymark.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.EventStoreBuilder;
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
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.IntStream;

/**
 * Append throughput, side by side in one run on one database: (a) raw single-row INSERT commits,
 * (b) a counter-row design (one statement increments a single counter row and inserts), (c)
 * Waymark single-event appends with group commit (the default) and (d) without it, each with 1, 8,
 * 16 and 64 writers, with the p50 and p99 latency of a call beside each rate; then 100-event
 * batches against a raw multi-row insert with 1, 8 and 16 writers. Measurements are interleaved
 * over several rounds and the median is reported.
 */
public final class AppendBenchmark {

    private static final String PAYLOAD = "{\"order\":\"o-123\",\"amount\":42,\"currency\":\"EUR\",\"lines\":[{\"sku\":\"a-1\",\"qty\":2}]}";
    private static final int BATCH = 100;
    private static final int[] WRITERS = {1, 8, 16, 64};
    /** The 100-event batches run with at most this many writers. */
    private static final int MAX_BATCH_WRITERS = 16;
    private static final List<String> SINGLE = List.of("raw", "counter", "waymark", "waymarkalone");
    /** Unique stream versions for the baseline tables across all measurements. */
    private static final java.util.concurrent.atomic.AtomicLong VERSIONS = new java.util.concurrent.atomic.AtomicLong();

    private AppendBenchmark() {}

    /** The measurements of one cell, round by round: rates and each round's p50 and p99 latency in ms. */
    private static final class Cell {
        final List<Double> rates = new ArrayList<>();
        final List<Double> p50s = new ArrayList<>();
        final List<Double> p99s = new ArrayList<>();

        void add(double rate, Queue<Long> latencies) {
            rates.add(rate);
            long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
            p50s.add(sorted.length == 0 ? Double.NaN : Throughput.percentile(sorted, 0.50) / 1e6);
            p99s.add(sorted.length == 0 ? Double.NaN : Throughput.percentile(sorted, 0.99) / 1e6);
        }

        String text() {
            return String.format(Locale.ROOT, "%,.0f (%.1f / %.1f)", Throughput.median(rates), Throughput.median(p50s),
                    Throughput.median(p99s));
        }
    }

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(AppendBenchmark::run);
    }

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        Duration duration = Duration.ofSeconds(Long.getLong("bench.seconds", 3));
        int rounds = Integer.getInteger("bench.rounds", 3);
        try (BenchDatabase db = BenchDatabase.create(); HikariDataSource pool = db.pool(16)) {
            int flights = Integer.getInteger("bench.flights", EventStoreBuilder.DEFAULT_MAX_CONCURRENT_APPEND_BATCHES);
            try (EventStore store = EventStore.builder(pool).notifications(false).maxConcurrentAppendBatches(flights)
                    .build();
                    EventStore alone = EventStore.builder(pool).notifications(false).groupCommit(false).build()) {
                store.migrate();
                createBaselineTables(pool);
                out.setup("append benchmark: %s; %d cores; %d round(s) of %d s per cell, rates: median of rounds;"
                        + " ratios: median of per-round ratios; latency of a call p50 / p99 in ms: median of rounds;"
                        + " a pool of 16 connections for every kind; maxConcurrentAppendBatches: %d",
                        db.server(), Runtime.getRuntime().availableProcessors(), rounds, duration.toSeconds(), flights);
                Map<String, Cell> results = new LinkedHashMap<>();
                Map<String, Throughput.Op> kinds = new LinkedHashMap<>();
                kinds.put("raw", rawInsert(pool));
                kinds.put("counter", counterRow(pool));
                kinds.put("waymark", waymark(store, 1));
                kinds.put("waymarkalone", waymark(alone, 1));
                kinds.put("rawbatch", rawBatch(pool));
                kinds.put("waymarkbatch", waymark(store, BATCH));
                List<String> order = new ArrayList<>(kinds.keySet());
                for (int round = 0; round < rounds; round++) {
                    for (int writers : WRITERS) {
                        for (String kind : order) {
                            if (!SINGLE.contains(kind) && writers > MAX_BATCH_WRITERS) {
                                continue;
                            }
                            Queue<Long> latencies = new ConcurrentLinkedQueue<>();
                            double rate = Throughput.measure(writers, duration, Throughput.timed(kinds.get(kind),
                                    latencies));
                            results.computeIfAbsent(kind + "/" + writers, k -> new Cell()).add(rate, latencies);
                        }
                    }
                    java.util.Collections.rotate(order, 1); // no kind always runs first or last
                    out.progress("round %d done", round + 1);
                }
                print(out, results);
            }
        }
    }

    private static List<Double> rates(Map<String, Cell> results, String kind, int writers) {
        return results.get(kind + "/" + writers).rates;
    }

    private static void print(BenchReport out, Map<String, Cell> results) {
        out.println("Rates in events/s, with the latency of a call, p50 / p99 in ms, in brackets.");
        out.println();
        out.println(
                "| writers | (a) raw INSERT | (b) counter row | (c) Waymark, group commit | (d) Waymark, group commit off"
                        + " | (c)/(a) | (c)/(b) | (d)/(a) | (c)/(d) |");
        out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (int writers : WRITERS) {
            List<Double> a = rates(results, "raw", writers);
            List<Double> b = rates(results, "counter", writers);
            List<Double> c = rates(results, "waymark", writers);
            List<Double> d = rates(results, "waymarkalone", writers);
            out.printf("| %d | %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f |%n", writers,
                    results.get("raw/" + writers).text(), results.get("counter/" + writers).text(),
                    results.get("waymark/" + writers).text(), results.get("waymarkalone/" + writers).text(),
                    Throughput.pairedRatio(c, a), Throughput.pairedRatio(c, b), Throughput.pairedRatio(d, a),
                    Throughput.pairedRatio(c, d));
        }
        out.println();
        List<Double> batchRatios = new ArrayList<>();
        out.println("| writers | raw multi-row INSERT of 100 ev/s | Waymark 100-event append ev/s | ratio |");
        out.println("|---:|---:|---:|---:|");
        for (int writers : WRITERS) {
            if (writers > MAX_BATCH_WRITERS) {
                continue;
            }
            List<Double> raw = rates(results, "rawbatch", writers);
            List<Double> waymark = rates(results, "waymarkbatch", writers);
            double ratio = Throughput.pairedRatio(waymark, raw);
            out.printf("| %d | %,.0f | %,.0f | %.2f |%n", writers, Throughput.median(raw), Throughput.median(waymark),
                    ratio);
            batchRatios.add(ratio);
        }
        out.println();
        out.printf("Per round, 8 writers (ev/s): raw %s; counter %s; Waymark %s; Waymark without group commit %s.%n",
                Throughput.format(rates(results, "raw", 8)), Throughput.format(rates(results, "counter", 8)),
                Throughput.format(rates(results, "waymark", 8)), Throughput.format(rates(results, "waymarkalone", 8)));
        List<Double> a8 = rates(results, "raw", 8);
        List<Double> b8 = rates(results, "counter", 8);
        List<Double> c8 = rates(results, "waymark", 8);
        out.target("2", "Waymark / raw INSERT, single events, 8 writers", Throughput.pairedRatio(c8, a8),
                BenchResult.Comparison.AT_LEAST, 0.7, "", "");
        out.target("2", "Waymark / counter row, single events, 8 writers", Throughput.pairedRatio(c8, b8),
                BenchResult.Comparison.AT_LEAST, 3, "", String.format(java.util.Locale.ROOT,
                        "raw INSERT / counter row in the same run: %.2f", Throughput.pairedRatio(a8, b8)));
        double worst = batchRatios.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        out.target("2", "100-event append / raw multi-row INSERT, lowest over 1, 8, 16 writers", worst,
                BenchResult.Comparison.AT_LEAST, 0.6, "", "");
        out.target("31", "Waymark (group commit) / raw INSERT, single events, 8 writers",
                Throughput.pairedRatio(c8, a8),
                BenchResult.Comparison.AT_LEAST, 1.0, "", "");
        out.target("31", "Waymark (group commit) / raw INSERT, single events, 16 writers",
                Throughput.pairedRatio(rates(results, "waymark", 16), rates(results, "raw", 16)),
                BenchResult.Comparison.AT_LEAST, 1.5, "", "");
        out.target("31", "Waymark (group commit) / counter row, single events, 8 writers",
                Throughput.pairedRatio(c8, b8), BenchResult.Comparison.AT_LEAST, 3, "", "");
        out.target("31", "1 writer: Waymark with group commit / without, same run", Throughput.pairedRatio(
                rates(results, "waymark", 1), rates(results, "waymarkalone", 1)), BenchResult.Comparison.AT_LEAST, 0.95,
                "", "no worse than without it; 0.95 leaves room for the noise between two cells of a round");
    }

    /** Baseline tables with the same columns and indexes as waymark.events, so only Waymark's logic differs. */
    private static void createBaselineTables(HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_events (LIKE waymark.events INCLUDING ALL)");
            s.execute("CREATE TABLE counter (id int PRIMARY KEY, value bigint NOT NULL)");
            s.execute("INSERT INTO counter VALUES (1, 0)");
            s.execute("CREATE TABLE counter_events (LIKE waymark.events INCLUDING ALL)");
        }
    }

    private static Throughput.Op rawInsert(HikariDataSource pool) {
        return singleRow(pool, "INSERT INTO raw_events (event_id, stream_id, stream_version, category, event_type,"
                + " data, created_at) VALUES (?, ?, ?, ?, ?, ?::jsonb, now())");
    }

    private static Throughput.Op counterRow(HikariDataSource pool) {
        return singleRow(pool, """
                WITH c AS (UPDATE counter SET value = value + 1 WHERE id = 1 RETURNING value)
                INSERT INTO counter_events (global_position, event_id, stream_id,
                    stream_version, category, event_type, data, created_at)
                OVERRIDING SYSTEM VALUE SELECT value, ?, ?, ?, ?, ?, ?::jsonb, now() FROM c
                """);
    }

    /** One autocommit statement per event, binding (event id, stream id, version, category, type, data). */
    private static Throughput.Op singleRow(HikariDataSource pool, String sql) {
        return (thread, i) -> {
            try (Connection c = pool.getConnection(); PreparedStatement p = c.prepareStatement(sql)) {
                p.setObject(1, UUID.randomUUID());
                p.setLong(2, thread * 1000L + i % 100);
                p.setLong(3, VERSIONS.incrementAndGet());
                p.setString(4, "bench" + thread);
                p.setString(5, "OrderPlaced");
                p.setString(6, PAYLOAD);
                p.executeUpdate();
            }
            return 1;
        };
    }

    private static Throughput.Op rawBatch(HikariDataSource pool) {
        return (thread, i) -> {
            try (Connection c = pool.getConnection();
                    PreparedStatement p = c.prepareStatement("INSERT INTO raw_events"
                            + " (event_id, stream_id, stream_version, category, event_type, data, created_at)"
                            + " SELECT u.*, now() FROM unnest(?::uuid[], ?::bigint[], ?::bigint[], ?::text[], ?::text[],"
                            + " ?::text[]::jsonb[]) AS u")) {
                UUID[] ids = IntStream.range(0, BATCH).mapToObj(k -> UUID.randomUUID()).toArray(UUID[]::new);
                Long[] streams = new Long[BATCH];
                Arrays.fill(streams, thread * 1000L + i % 100);
                String[] categories = new String[BATCH];
                Arrays.fill(categories, "bench" + thread);
                long first = VERSIONS.getAndAdd(BATCH);
                Long[] versions = IntStream.range(0, BATCH).mapToObj(k -> first + k).toArray(Long[]::new);
                String[] types = new String[BATCH];
                Arrays.fill(types, "OrderPlaced");
                String[] data = new String[BATCH];
                Arrays.fill(data, PAYLOAD);
                p.setArray(1, c.createArrayOf("uuid", ids));
                p.setArray(2, c.createArrayOf("int8", streams));
                p.setArray(3, c.createArrayOf("int8", versions));
                p.setArray(4, c.createArrayOf("text", categories));
                p.setArray(5, c.createArrayOf("text", types));
                p.setArray(6, c.createArrayOf("text", data));
                p.executeUpdate();
            }
            return BATCH;
        };
    }

    private static Throughput.Op waymark(EventStore store, int batch) {
        List<EventData> events = IntStream.range(0, batch).mapToObj(k -> EventData.json("OrderPlaced", PAYLOAD))
                .toList();
        return (thread, i) -> {
            store.append("bench" + thread + "-" + (i % 100), ExpectedVersion.any(), events);
            return batch;
        };
    }
}
