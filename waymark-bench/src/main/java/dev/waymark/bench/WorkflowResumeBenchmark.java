package dev.waymark.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbos.transact.DBOS;
import dev.dbos.transact.StartWorkflowOptions;
import dev.dbos.transact.config.DBOSConfig;
import dev.dbos.transact.workflow.Workflow;
import dev.waymark.store.EventStore;
import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * Workflows that suspend, offered at increasing rates (open loop: starts at a fixed pace, whatever
 * the backlog): a step, a 100 ms durable sleep, an awakeable that another process
 * ({@link ResumeCompleterMain}, which runs no workflow) completes once the workflow has published it,
 * then two steps. The same workflow without suspension (four steps) is the baseline, and DBOS
 * Transact runs the same workflow ({@code DBOS.sleep}, {@code recv} completed by the other process's
 * {@code DBOSClient.send}). A rate is sustained when every workflow started in the window finishes
 * within {@link #DRAIN} of the window's end and p99 start-to-finish latency stays under
 * {@link #MAX_P99}: the backlog stayed bounded. Reported: the highest sustained rate of each system,
 * the ratios, and p50/p99 at 80% of each system's sustained rate.
 */
public final class WorkflowResumeBenchmark {

    private static final int POOL = 16;
    private static final Duration SLEEP = Duration.ofMillis(100);
    static final Duration DRAIN = Duration.ofSeconds(3);
    static final Duration MAX_P99 = Duration.ofSeconds(2);
    private static final String[] SYSTEMS = {"waymark-plain", "waymark", "dbos"};
    private static final AtomicLong IDS = new AtomicLong();
    /** When each workflow published what it waits for (diagnostic: the wait after it). */
    private static final Map<String, Long> PUBLISHED = new ConcurrentHashMap<>();

    private WorkflowResumeBenchmark() {}

    /** The DBOS workflow, registered through an interface proxy. */
    public interface Suspending {
        /** A step, a durable sleep, a recv completed by another process, two steps. */
        int run(int input) throws Exception;
    }

    /** The DBOS body. */
    static final class DbosSuspending implements Suspending {
        private DBOS dbos;
        private DataSource bench;

        @Override
        @Workflow(name = "suspending")
        public int run(int input) throws Exception {
            int sum = dbos.runStep(() -> 1, "first");
            dbos.sleep(SLEEP);
            String id = DBOS.workflowId();
            dbos.runStep(() -> publish(bench, "dbos", id), "publish");
            PUBLISHED.put(id, System.nanoTime());
            String by = dbos.<String>recv(ResumeCompleterMain.TOPIC, Duration.ofMinutes(2))
                    .orElseThrow(() -> new IllegalStateException("no message for " + id));
            sum += dbos.runStep(() -> by.length(), "second");
            sum += dbos.runStep(() -> 1, "third");
            return sum;
        }
    }

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(WorkflowResumeBenchmark::run);
    }

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        Duration window = Duration.ofSeconds(Long.getLong("bench.seconds", BenchReport.quick() ? 3 : 6));
        double first = Double.parseDouble(property("bench.rate.first", "100"));
        double step = Double.parseDouble(property("bench.rate.step", "1.25"));
        Map<String, CompletionTracker> trackers = new ConcurrentHashMap<>();
        WorkflowListener hook = new WorkflowListener() {
            @Override
            public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error,
                    Duration elapsed) {
                if (outcome instanceof WorkflowOutcome.Completed<?>) {
                    CompletionTracker t = trackers.get(name);
                    if (t != null) {
                        t.finished(id);
                    }
                }
            }
        };
        try (BenchDatabase db = BenchDatabase.create();
                HikariDataSource waymarkPool = db.pool(POOL);
                // the publish step's pool (both systems use it): as large as theirs, so that it is not
                // what limits them (with 4 connections, runs queued for it at a few hundred workflows/s)
                HikariDataSource benchPool = db.pool(POOL);
                HikariDataSource dbosPool = db.pool(db.createSibling("dbos"), POOL);
                EventStore store = EventStore.builder(waymarkPool).build()) {
            store.migrate();
            try (Connection c = benchPool.getConnection(); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE bench_waits (system text NOT NULL, id text NOT NULL)");
            }
            WorkflowRegistry registry = new WorkflowRegistry()
                    .register("suspending", Integer.class, Integer.class, (ctx, in) -> {
                        int sum = ctx.step("first", Integer.class, () -> 1);
                        ctx.sleep("nap", SLEEP);
                        Awakeable<String> approval = ctx.awakeable("approval", String.class);
                        ctx.step("publish", Integer.class,
                                () -> publish(benchPool, "waymark", approval.id().toString()));
                        PUBLISHED.putIfAbsent(ctx.workflowId(), System.nanoTime());
                        String by = approval.await();
                        sum += ctx.step("second", Integer.class, by::length);
                        sum += ctx.step("third", Integer.class, () -> 1);
                        return sum;
                    })
                    .register("plain", Integer.class, Integer.class, (ctx, in) -> {
                        int sum = ctx.step("first", Integer.class, () -> 1);
                        ctx.step("publish", Integer.class, () -> 1);
                        sum += ctx.step("second", Integer.class, () -> 2);
                        sum += ctx.step("third", Integer.class, () -> 1);
                        return sum;
                    });
            DbosSuspending dbosBody = new DbosSuspending();
            dbosBody.bench = benchPool;
            Process completer = completer(db);
            try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).listener(hook).build();
                    ResumeWorker worker = engine.resumeWorker(ResumeOptions.defaults()).start();
                    DBOS dbos = new DBOS(DBOSConfig.defaults("waymark-bench").withDataSource(dbosPool));
                    ExecutorService starters = Executors.newVirtualThreadPerTaskExecutor()) {
                dbosBody.dbos = dbos;
                out.progress("resume worker %s, concurrency %d", worker.owner(), worker.options().concurrency());
                Suspending proxy = dbos.registerProxy(Suspending.class, dbosBody);
                dbos.launch();
                Map<String, Starter> starts = Map.of(
                        "waymark-plain",
                        tracked(trackers, "plain", t -> id -> engine.start("plain", id, 1, Integer.class)),
                        "waymark",
                        tracked(trackers, "suspending", t -> id -> engine.start("suspending", id, 1, Integer.class)),
                        "dbos", id -> {
                            CompletionTracker t = trackers.get("dbos");
                            var handle = dbos.startWorkflow(() -> proxy.run(1), new StartWorkflowOptions(id));
                            starters.execute(() -> {
                                try {
                                    handle.getResult();
                                    t.finished(id);
                                } catch (Exception e) {
                                    t.failed(id, e);
                                }
                            });
                        });
                out.setup("workflow resume benchmark: %s; %d cores (shared); DBOS Transact %s; pools of %d; offered"
                        + " rates from %.0f/s, x%.2f per step (a failed rate is tried once more); %d s windows after an"
                        + " unrecorded warm-up window per system; sustained = all finished within %d s of"
                        + " the window's end and p99 < %d s; the completer is a separate JVM", db.server(),
                        Runtime.getRuntime().availableProcessors(), DBOS.version(), POOL, first, step,
                        window.toSeconds(), DRAIN.toSeconds(), MAX_P99.toSeconds());
                Map<String, Double> sustained = new LinkedHashMap<>();
                Map<String, List<String>> ladders = new LinkedHashMap<>();
                List<String> chosen = List.of(property("bench.systems", String.join(",", SYSTEMS)).split(","));
                for (String system : SYSTEMS) {
                    if (!chosen.contains(system)) {
                        sustained.put(system, 0.0);
                        ladders.put(system, List.of("not run"));
                        continue;
                    }
                    // unrecorded warm-up: the JIT, and the other process's first completions, would fail the first rate
                    CompletionTracker warm = fresh(trackers, system);
                    Window w0 = offer(starts.get(system), warm, first, window, starters);
                    out.progress("%s warm-up at %.0f/s: %s", system, first, w0.describe(first));
                    awaitQuiet(warm);
                    double best = 0;
                    List<String> ladder = new ArrayList<>();
                    boolean retried = false;
                    for (double rate = first;;) {
                        CompletionTracker t = fresh(trackers, system);
                        Window w = offer(starts.get(system), t, rate, window, starters);
                        ladder.add(w.describe(rate));
                        out.progress("%s at %.0f/s: %s", system, rate, w.describe(rate));
                        awaitQuiet(t);
                        if (w.sustained()) {
                            best = rate;
                            rate *= step;
                            retried = false;
                        } else if (!retried) {
                            retried = true; // once more at the same rate: one noisy window on a shared machine
                        } else {
                            break;
                        }
                    }
                    sustained.put(system, best);
                    ladders.put(system, ladder);
                }
                Map<String, Window> at80 = new LinkedHashMap<>();
                for (String system : SYSTEMS) {
                    double rate = 0.8 * sustained.get(system);
                    CompletionTracker t = fresh(trackers, system);
                    at80.put(system, rate > 0 ? offer(starts.get(system), t, rate, window, starters) : null);
                    awaitQuiet(t);
                }
                print(out, sustained, ladders, at80, step);
            } finally {
                completer.getOutputStream().close();
                completer.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
                completer.destroyForcibly();
            }
        }
    }

    private static final Map<String, String> LABELS = Map.of(
            "waymark-plain", "Waymark, the same workflow without suspension (4 steps)",
            "waymark", "Waymark: step, 100 ms sleep, awakeable completed by another process, 2 steps",
            "dbos", "DBOS Transact: step, `DBOS.sleep` 100 ms, `recv` sent by another process, 2 steps");

    private static void print(BenchReport out, Map<String, Double> sustained, Map<String, List<String>> ladders,
            Map<String, Window> at80, double step) {
        out.println("| workflow | highest sustained rate (workflows/s) | p50 ms at 80% | p99 ms at 80% |");
        out.println("|---|---:|---:|---:|");
        for (String system : SYSTEMS) {
            Window w = at80.get(system);
            out.printf("| %s | %,.0f | %s | %s |%n", LABELS.get(system), sustained.get(system),
                    w == null ? "-" : String.format(java.util.Locale.US, "%.0f", w.p50Millis()),
                    w == null ? "-" : String.format(java.util.Locale.US, "%.0f", w.p99Millis()));
        }
        out.println();
        for (String system : SYSTEMS) {
            out.println("Ladder, " + system + ": " + String.join("; ", ladders.get(system)) + ".");
        }
        double suspending = sustained.get("waymark");
        double plain = sustained.get("waymark-plain");
        double dbos = sustained.get("dbos");
        out.println();
        out.println(String.format(java.util.Locale.US, "Sustained rate ratios: suspending / without suspension %.2f;"
                + " Waymark / DBOS Transact %.2f (the ladder's step is x%.2f, so each ratio is known to within that"
                + " factor).", suspending / plain, dbos > 0 ? suspending / dbos : Double.NaN, step));
        String ladderNote = String.format(java.util.Locale.US, "ladder steps of x%.2f", step);
        out.target("33", "suspending workflows' sustained rate / the same without suspension", suspending / plain,
                BenchResult.Comparison.AT_LEAST, 0.5, "", ladderNote);
        out.target("33", "Waymark / DBOS Transact sustained rate, suspending workflow",
                dbos > 0 ? suspending / dbos : Double.NaN, BenchResult.Comparison.AT_LEAST, 2, "×",
                ladderNote);
    }

    /** A system property, or {@code fallback} when it is missing or blank (the bench profile passes empty ones). */
    private static String property(String name, String fallback) {
        String v = System.getProperty(name, "");
        return v.isBlank() ? fallback : v.trim();
    }

    /** Starts one workflow with the given id. */
    @FunctionalInterface
    interface Starter {
        void start(String id) throws Exception;
    }

    private static Starter tracked(Map<String, CompletionTracker> trackers, String name,
            java.util.function.Function<CompletionTracker, Consumer<String>> body) {
        return id -> body.apply(trackers.get(name)).accept(id);
    }

    private static CompletionTracker fresh(Map<String, CompletionTracker> trackers, String system) {
        CompletionTracker t = new CompletionTracker();
        trackers.put(switch (system) {
            case "waymark" -> "suspending";
            case "waymark-plain" -> "plain";
            default -> "dbos";
        }, t);
        return t;
    }

    /** Offers {@code rate} starts per second for {@code window}, then waits up to {@link #DRAIN} for them. */
    private static Window offer(Starter starter, CompletionTracker t, double rate, Duration window,
            ExecutorService starters) throws InterruptedException {
        long t0 = System.nanoTime();
        long end = t0 + window.toNanos();
        long n = 0;
        while (true) {
            long due = t0 + (long) (n * 1e9 / rate);
            if (due >= end) {
                break;
            }
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait); // the offered pace
            }
            String id = "r-" + IDS.incrementAndGet();
            t.started(id);
            starters.execute(() -> {
                try {
                    starter.start(id);
                } catch (Exception e) {
                    t.failed(id, e);
                }
            });
            n++;
        }
        long deadline = System.nanoTime() + DRAIN.toNanos();
        while (t.open() > 0 && System.nanoTime() < deadline && t.failures.get() == 0) {
            LockSupport.parkNanos(5_000_000); // polling the count of unfinished workflows
        }
        return t.window(n, t.open() == 0 && t.failures.get() == 0);
    }

    /** Waits (up to 60 s) until the workflows of a failed step have finished too, so that the next starts clean. */
    private static void awaitQuiet(CompletionTracker t) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (t != null && t.open() > 0 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(20_000_000);
        }
    }

    static int publish(DataSource bench, String system, String id) throws SQLException {
        try (Connection c = bench.getConnection();
                PreparedStatement p = c.prepareStatement("INSERT INTO bench_waits (system, id) VALUES (?, ?)")) {
            p.setString(1, system);
            p.setString(2, id);
            p.executeUpdate();
        }
        return 1;
    }

    private static Process completer(BenchDatabase db) throws Exception {
        String javaCommand = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(javaCommand, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
                System.getProperty("java.class.path"), ResumeCompleterMain.class.getName(), db.url(),
                db.url().replaceFirst("/" + db.name() + "(?=\\?|$)", "/" + db.name() + "_dbos"))
                .redirectErrorStream(true).start();
        java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                java.nio.charset.StandardCharsets.UTF_8));
        String line = r.readLine();
        if (!"ready".equals(line)) {
            throw new IllegalStateException("completer did not start: " + line);
        }
        Thread.ofPlatform().daemon().start(() -> r.lines().forEach(l -> System.out.println("[completer] " + l)));
        return p;
    }

    /** One offered window's outcome. */
    record Window(long started, boolean sustained, double p50Millis, double p99Millis, long unfinished,
            double afterPublishP50Millis) {
        String describe(double rate) {
            return String.format(java.util.Locale.US, "%.0f/s %s (p50 %.0f ms, p99 %.0f ms%s%s)", rate,
                    sustained ? "sustained" : "NOT sustained", p50Millis, p99Millis,
                    unfinished > 0 ? ", " + unfinished + " unfinished" : "",
                    Double.isNaN(afterPublishP50Millis)
                            ? ""
                            : String.format(java.util.Locale.US, "; p50 publish to finish %.0f ms",
                                    afterPublishP50Millis));
        }
    }

    /** Start and finish times of the workflows of one window. */
    static final class CompletionTracker {
        private final Map<String, Long> startedAt = new ConcurrentHashMap<>();
        private final List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
        private final List<Long> afterPublish = java.util.Collections.synchronizedList(new ArrayList<>());
        private final AtomicLong open = new AtomicLong();
        final AtomicLong failures = new AtomicLong();

        void started(String id) {
            startedAt.put(id, System.nanoTime());
            open.incrementAndGet();
        }

        void finished(String id) {
            Long s = startedAt.remove(id);
            if (s != null) {
                long now = System.nanoTime();
                latencies.add(now - s);
                Long p = PUBLISHED.remove(id);
                if (p != null) {
                    afterPublish.add(now - p);
                }
                open.decrementAndGet();
            }
        }

        void failed(String id, Exception e) {
            failures.incrementAndGet();
            System.out.println("workflow " + id + " failed: " + e);
        }

        long open() {
            return open.get();
        }

        Window window(long started, boolean allFinished) {
            long[] sorted;
            synchronized (latencies) {
                sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
            }
            double p50 = sorted.length == 0 ? Double.NaN : Throughput.percentile(sorted, 0.50) / 1e6;
            double p99 = sorted.length == 0 ? Double.NaN : Throughput.percentile(sorted, 0.99) / 1e6;
            boolean ok = allFinished && p99 < MAX_P99.toMillis();
            long[] waits;
            synchronized (afterPublish) {
                waits = afterPublish.stream().mapToLong(Long::longValue).sorted().toArray();
            }
            double wait50 = waits.length == 0 ? Double.NaN : Throughput.percentile(waits, 0.50) / 1e6;
            return new Window(started, ok, p50, p99, open(), wait50);
        }
    }
}
