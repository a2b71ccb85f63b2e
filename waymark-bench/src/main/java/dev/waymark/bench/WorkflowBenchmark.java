package dev.waymark.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbos.transact.DBOS;
import dev.dbos.transact.StartWorkflowOptions;
import dev.dbos.transact.config.DBOSConfig;
import dev.dbos.transact.workflow.Workflow;
import dev.waymark.store.EventStore;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.WorkflowRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Durable workflows, side by side in one run on one server: a 10-step workflow whose steps do
 * nothing (each returns its index), run by the Waymark engine and by DBOS Transact, against raw
 * single-row autocommit INSERTs, each at 1 and 16 in flight (that many client threads, each
 * starting a workflow and awaiting its result, then the next). Every pool has the same size.
 * Cells are interleaved round by round in a rotating order after an unrecorded warm-up round; each
 * reported value is the median over the rounds. A diagnostic Waymark row waits for the engine's
 * {@code runFinished} listener callback instead of {@code handle.await} (as DBOS's handle waits on
 * an in-process future), and a last pass counts the transactions each system makes per operation.
 */
public final class WorkflowBenchmark {

    private static final int STEPS = 10;
    private static final int POOL = 16;
    private static final int[] CONCURRENCY = {1, 16};
    private static final String[] SYSTEMS = {"raw", "waymark", "waymark-hook", "dbos"};
    private static final Duration AWAIT = Duration.ofMinutes(1);
    /** An idle backend flushes its statistics within 10 s (PGSTAT_IDLE_INTERVAL of PostgreSQL 15). */
    private static final Duration STATS_FLUSH = Duration.ofSeconds(12);
    /** Unique workflow ids over the whole run. */
    private static final AtomicLong IDS = new AtomicLong();

    private WorkflowBenchmark() {}

    /** The DBOS workflow: DBOS registers workflows through an interface proxy. */
    public interface TenSteps {
        /** Runs ten no-op steps and returns the sum of their results. */
        int run(int input);
    }

    /** Ten DBOS steps, each returning its index. */
    static final class DbosTenSteps implements TenSteps {
        private DBOS dbos;

        @Override
        @Workflow(name = "tenSteps")
        public int run(int input) {
            int sum = 0;
            for (int i = 0; i < STEPS; i++) {
                final int k = i;
                sum += dbos.runStep(() -> k, "s" + i);
            }
            return sum;
        }
    }

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(WorkflowBenchmark::run);
    }

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        Duration duration = Duration.ofSeconds(Long.getLong("bench.seconds", 3));
        Duration warmUp = Duration.ofSeconds(Long.getLong("bench.warmup", 5));
        int rounds = Integer.getInteger("bench.rounds", 3);
        WorkflowRegistry registry = new WorkflowRegistry().register("tenSteps", Integer.class, Integer.class,
                (ctx, in) -> {
                    int sum = 0;
                    for (int i = 0; i < STEPS; i++) {
                        final int k = i;
                        sum += ctx.step("s" + i, Integer.class, () -> k);
                    }
                    return sum;
                });
        try (BenchDatabase db = BenchDatabase.create();
                HikariDataSource rawPool = db.pool(POOL);
                HikariDataSource waymarkPool = db.pool(POOL);
                HikariDataSource dbosPool = db.pool(db.createSibling("dbos"), POOL);
                EventStore store = EventStore.builder(waymarkPool).build()) {
            store.migrate();
            createBaselineTable(rawPool);
            DbosTenSteps dbosBody = new DbosTenSteps();
            Map<String, CompletableFuture<WorkflowOutcome<?>>> finished = new ConcurrentHashMap<>();
            WorkflowListener hook = new WorkflowListener() {
                @Override
                public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error,
                        Duration elapsed) {
                    CompletableFuture<WorkflowOutcome<?>> f = finished.remove(id);
                    if (f != null) {
                        if (outcome != null) {
                            f.complete(outcome);
                        } else {
                            f.completeExceptionally(error);
                        }
                    }
                }
            };
            try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).listener(hook).build();
                    DBOS dbos = new DBOS(DBOSConfig.defaults("waymark-bench").withDataSource(dbosPool))) {
                dbosBody.dbos = dbos;
                TenSteps dbosProxy = dbos.registerProxy(TenSteps.class, dbosBody);
                dbos.launch();
                Map<String, Cell> cells = new LinkedHashMap<>();
                Map<String, Throughput.Op> ops = Map.of(
                        "raw", rawInsert(rawPool),
                        "waymark", waymark(engine),
                        "waymark-hook", waymarkHook(engine, finished),
                        "dbos", dbos(dbos, dbosProxy));
                out.setup("workflow benchmark: %s; %d cores; DBOS Transact %s; pools of %d;"
                        + " %d round(s) of %d s per cell after a warm-up round of %d s per cell; rates and latencies:"
                        + " median of rounds; ratios: median of per-round ratios", db.server(),
                        Runtime.getRuntime().availableProcessors(), DBOS.version(), POOL, rounds,
                        duration.toSeconds(), warmUp.toSeconds());
                for (int round = -1; round < rounds; round++) {
                    Duration d = round < 0 ? warmUp : duration;
                    for (int concurrency : CONCURRENCY) {
                        for (int s = 0; s < SYSTEMS.length; s++) {
                            String system = SYSTEMS[Math.floorMod(s + round, SYSTEMS.length)];
                            Cell cell = new Cell();
                            cell.rate = Throughput.measure(concurrency, d, timed(ops.get(system), cell.latencies));
                            if (round >= 0) {
                                cells.computeIfAbsent(system + "/" + concurrency, k -> new Cell()).add(cell);
                            }
                        }
                    }
                    out.progress(round < 0 ? "warm-up done" : "round " + (round + 1) + " done");
                }
                print(out, cells);
                if (BenchReport.quick()) {
                    return; // the transaction count waits out statistics flushes: about two minutes
                }
                Map<String, String> databases = Map.of("raw", db.name(), "waymark", db.name(), "waymark-hook",
                        db.name(),
                        "dbos", db.name() + "_dbos");
                Thread.sleep(STATS_FLUSH.toMillis()); // let the measured rounds' statistics land first
                out.println();
                out.println(
                        "| transactions per operation (pg_stat_database, one 2 s pass) | in flight 1 | in flight 16 |");
                out.println("|---|---:|---:|");
                for (String system : SYSTEMS) {
                    StringBuilder row = new StringBuilder("| " + system + " |");
                    for (int concurrency : CONCURRENCY) {
                        row.append(String.format(" %.1f |", transactionsPerOp(rawPool, databases.get(system),
                                concurrency, ops.get(system))));
                    }
                    out.println(row.toString());
                }
            }
        }
    }

    /** The measurements of one cell: a rate per round and per-operation latencies per round. */
    private static final class Cell {
        double rate;
        final Queue<Long> latencies = new ConcurrentLinkedQueue<>();
        final List<Double> rates = new ArrayList<>();
        final List<Double> p50s = new ArrayList<>();
        final List<Double> p99s = new ArrayList<>();

        void add(Cell round) {
            rates.add(round.rate);
            long[] sorted = round.latencies.stream().mapToLong(Long::longValue).sorted().toArray();
            p50s.add(Throughput.percentile(sorted, 0.50) / 1e6);
            p99s.add(Throughput.percentile(sorted, 0.99) / 1e6);
        }
    }

    private static final Map<String, String> LABELS = Map.of(
            "raw", "raw single-row INSERT commits (ops/s)",
            "waymark", "Waymark, `start` + `handle.await`",
            "waymark-hook", "Waymark, `start` + wait for `runFinished` (diagnostic)",
            "dbos", "DBOS Transact, `startWorkflow` + `getResult`");

    private static void print(BenchReport out, Map<String, Cell> cells) {
        out.println("| in flight | 10 no-op steps per workflow | steps/s | / raw commits | / DBOS | p50 ms | p99 ms |");
        out.println("|---:|---|---:|---:|---:|---:|---:|");
        for (int concurrency : CONCURRENCY) {
            Cell raw = cells.get("raw/" + concurrency);
            Cell dbos = cells.get("dbos/" + concurrency);
            for (String system : SYSTEMS) {
                Cell cell = cells.get(system + "/" + concurrency);
                out.printf("| %d | %s | %,.0f | %.2f | %.2f | %.1f | %.1f |%n", concurrency, LABELS.get(system),
                        Throughput.median(cell.rates), pairedRatio(cell, raw), pairedRatio(cell, dbos),
                        Throughput.median(cell.p50s), Throughput.median(cell.p99s));
            }
        }
        out.println();
        StringBuilder rounds = new StringBuilder("Per round (ops/s for raw, steps/s otherwise):");
        cells.forEach((key, cell) -> rounds.append(' ').append(key).append(' ').append(
                String.join(" / ",
                        cell.rates.stream().map(v -> String.format(java.util.Locale.US, "%,.0f", v)).toList()))
                .append(';'));
        rounds.setLength(rounds.length() - 1);
        out.println(rounds.append('.').toString());
        Cell waymark16 = cells.get("waymark/16");
        Cell raw16 = cells.get("raw/16");
        Cell dbos16 = cells.get("dbos/16");
        double waymarkMedian = Throughput.median(waymark16.rates);
        out.println(String.format(java.util.Locale.US,
                "Ratios of the medians, 16 in flight: Waymark / raw commits %.2f,"
                        + " Waymark / DBOS %.2f.",
                waymarkMedian / Throughput.median(raw16.rates),
                waymarkMedian / Throughput.median(dbos16.rates)));
        out.target("5", "Waymark steps/s / raw commits, 16 in flight", pairedRatio(waymark16, raw16),
                BenchResult.Comparison.AT_LEAST, 0.6, "", "");
        out.target("5", "Waymark steps/s / DBOS Transact steps/s, 16 in flight", pairedRatio(waymark16, dbos16),
                BenchResult.Comparison.AT_LEAST, 3, "×", "");
    }

    /** The median over rounds of {@code cell}'s rate over {@code baseline}'s in the same round. */
    private static double pairedRatio(Cell cell, Cell baseline) {
        return Throughput.pairedRatio(cell.rates, baseline.rates);
    }

    /**
     * Runs {@code op} for 2 s and returns the transactions that database {@code database} committed
     * or rolled back per operation (pg_stat_database; every autocommit statement is one).
     */
    private static double transactionsPerOp(HikariDataSource pool, String database, int concurrency,
            Throughput.Op op) throws Exception {
        long before = transactions(pool, database);
        Queue<Long> latencies = new ConcurrentLinkedQueue<>();
        Throughput.measure(concurrency, Duration.ofSeconds(2), timed(op, latencies));
        Thread.sleep(STATS_FLUSH.toMillis());
        // our own two reads of the statistics count too (in the first database): noise at this scale
        return (double) (transactions(pool, database) - before) / latencies.size();
    }

    private static long transactions(HikariDataSource pool, String database) throws SQLException {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement();
                PreparedStatement p = c.prepareStatement("SELECT xact_commit + xact_rollback FROM pg_stat_database"
                        + " WHERE datname = ?")) {
            s.execute("SELECT pg_stat_clear_snapshot()");
            p.setString(1, database);
            try (java.sql.ResultSet rs = p.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Records each operation's wall time, start to result, in nanoseconds. */
    private static Throughput.Op timed(Throughput.Op op, Queue<Long> latencies) {
        return (thread, i) -> {
            long start = System.nanoTime();
            int n = op.run(thread, i);
            latencies.add(System.nanoTime() - start);
            return n;
        };
    }

    private static void createBaselineTable(HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE raw_commits (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                    + " thread int NOT NULL, n bigint NOT NULL, value text NOT NULL)");
        }
    }

    /** One autocommit INSERT of a small row per operation. */
    private static Throughput.Op rawInsert(HikariDataSource pool) {
        return (thread, i) -> {
            try (Connection c = pool.getConnection();
                    PreparedStatement p = c
                            .prepareStatement("INSERT INTO raw_commits (thread, n, value) VALUES (?, ?, ?)")) {
                p.setInt(1, thread);
                p.setLong(2, i);
                p.setString(3, "{\"step\":" + (i % STEPS) + "}");
                p.executeUpdate();
            }
            return 1;
        };
    }

    /** Starts a Waymark workflow and awaits its result; counts its steps. */
    private static Throughput.Op waymark(WorkflowEngine engine) {
        return (thread, i) -> {
            int sum = engine.start("tenSteps", "wf-" + IDS.incrementAndGet(), 1, Integer.class).await(AWAIT);
            return checked(sum);
        };
    }

    /**
     * A diagnostic variant: starts a Waymark workflow and waits for the engine's
     * {@link WorkflowListener#runFinished} callback of that run instead of {@code handle.await}, so
     * the client issues no status queries of its own.
     */
    private static Throughput.Op waymarkHook(WorkflowEngine engine,
            Map<String, CompletableFuture<WorkflowOutcome<?>>> finished) {
        return (thread, i) -> {
            String id = "wf-" + IDS.incrementAndGet();
            CompletableFuture<WorkflowOutcome<?>> done = new CompletableFuture<>();
            finished.put(id, done);
            engine.start("tenSteps", id, 1, Integer.class);
            if (!(done.get(AWAIT.toSeconds(), TimeUnit.SECONDS) instanceof WorkflowOutcome.Completed<?> c)) {
                throw new IllegalStateException("workflow " + id + " did not complete");
            }
            return checked((Integer) c.result());
        };
    }

    /** Starts a DBOS workflow and awaits its result; counts its steps. */
    private static Throughput.Op dbos(DBOS dbos, TenSteps proxy) {
        return (thread, i) -> {
            int sum = dbos.startWorkflow(() -> proxy.run(1), new StartWorkflowOptions("wf-" + IDS.incrementAndGet()))
                    .getResult();
            return checked(sum);
        };
    }

    private static int checked(int sum) {
        if (sum != STEPS * (STEPS - 1) / 2) {
            throw new IllegalStateException("workflow returned " + sum);
        }
        return STEPS;
    }
}
