package dev.waymark.bench;

import dev.waymark.store.EventStore;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a quiet system costs its database (issue 34), before and after the shared head probe, side
 * by side in one run: a worker process with 1, 4 and 16 idle sharded pools of 16 buckets (default
 * settings, nothing appended) and the server's transactions per second in the benchmark's database
 * ({@code pg_stat_database.xact_commit + xact_rollback} deltas) and the process's CPU; then the
 * append-to-handler latency under a paced load. Each measurement runs in a child JVM: "after" on
 * this build, "before" on the build named by {@code -Dbench.baseline.classpath} (a file holding the
 * class path of the earlier build's waymark-bench, as {@code mvn dependency:build-classpath} writes
 * it), with this build's bench classes first (the child uses only API that build had). Without it,
 * only "after" is measured.
 */
public final class IdleBenchmark {

    private static final int SHARDS = 16;
    private static final int[] POOLS = {1, 4, 16};

    private IdleBenchmark() {}

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(IdleBenchmark::run);
    }

    /** One build to measure: its label and the child's class path. */
    private record Build(String label, String classPath) {}

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        String seconds = System.getProperty("bench.idle.seconds", "");
        // long enough for PostgreSQL's statistics, which an idle backend flushes up to 10 s late
        Duration window = Duration.ofSeconds(seconds.isBlank() ? BenchReport.quick() ? 10 : 30 : Integer.parseInt(seconds));
        int rate = Integer.getInteger("bench.rate", 50);
        int latencySeconds = BenchReport.quick() ? 5 : 20;
        List<Build> builds = builds();
        try (BenchDatabase db = BenchDatabase.create()) {
            try (var pool = db.pool(2); EventStore store = EventStore.builder(pool).build()) {
                store.migrate();
            }
            out.setup("idle benchmark: %s; %d cores; %d-bucket pools, default settings (fallbackPoll 1 s, renewInterval"
                    + " 10 s); %d s window per cell after every bucket is claimed; latency: %d events/s for %d s, one"
                    + " pool of 16 buckets, writer and reader on separate store handles in one process; builds: %s",
                    db.server(), Runtime.getRuntime().availableProcessors(), SHARDS, window.toSeconds(), rate,
                    latencySeconds, String.join(", ", builds.stream().map(Build::label).toList()));
            out.println("| idle pools of 16 buckets | " + String.join(" | ", builds.stream()
                    .map(b -> b.label() + " tx/s | " + b.label() + " CPU % of a core").toList()) + " |");
            out.println("|---:|" + "---:|".repeat(2 * builds.size()));
            double[][] tps = new double[builds.size()][POOLS.length];
            for (int i = 0; i < POOLS.length; i++) {
                StringBuilder row = new StringBuilder("| " + POOLS[i] + " |");
                for (int b = 0; b < builds.size(); b++) {
                    double[] cell = idle(db, builds.get(b), POOLS[i], window, "i" + b + "p" + POOLS[i]);
                    tps[b][i] = cell[0];
                    row.append(String.format(java.util.Locale.US, " %.1f | %.2f |", cell[0], cell[1]));
                    out.progress("%s, %d pools: %.1f tx/s, %.2f %% CPU", builds.get(b).label(), POOLS[i], cell[0],
                            cell[1]);
                }
                out.println(row.toString());
            }
            out.println();
            out.println("| append-to-handler, " + rate + " events/s | " + String.join(" | ", builds.stream()
                    .map(Build::label).toList()) + " |");
            out.println("|---|" + "---:|".repeat(builds.size()));
            List<long[]> latencies = new ArrayList<>();
            for (int b = 0; b < builds.size(); b++) {
                latencies.add(latency(db, builds.get(b), rate, latencySeconds, "lat" + b));
            }
            String[] names = {"p50 ms", "p99 ms", "max ms"};
            for (int k = 0; k < names.length; k++) {
                StringBuilder row = new StringBuilder("| " + names[k] + " |");
                for (long[] l : latencies) {
                    row.append(String.format(java.util.Locale.US, " %.1f |", l[k] / 1000.0));
                }
                out.println(row.toString());
            }
            StringBuilder handled = new StringBuilder("| handled / appended |");
            for (long[] l : latencies) {
                handled.append(" ").append(l[3]).append(" / ").append(l[4]).append(" |");
            }
            out.println(handled.toString());
            out.println();

            int after = builds.size() - 1;
            // at most one transaction per pool per renew interval (10 s) and one probe per fallback interval (1 s)
            double bound = 16 / 10.0 + 1;
            out.target("34", "idle server tx/s, 16 pools of 16 buckets, after", tps[after][2],
                    BenchResult.Comparison.AT_MOST, bound, " tx/s",
                    "one probe a second plus one lease statement per pool per 10 s renew interval");
            if (builds.size() > 1) {
                out.target("34", "append-to-handler p99, after / before", (double) latencies.get(after)[1]
                        / Math.max(1, latencies.get(0)[1]), BenchResult.Comparison.AT_MOST, 1.0, "×", "no worse");
            }
        }
    }

    private static List<Build> builds() throws IOException {
        List<Build> builds = new ArrayList<>();
        String baseline = System.getProperty("bench.baseline.classpath", "");
        if (!baseline.isBlank()) {
            String benchClasses = new File(IdleWorkerMain.class.getProtectionDomain().getCodeSource().getLocation()
                    .getPath()).getPath();
            builds.add(new Build("before", benchClasses + File.pathSeparator
                    + Files.readString(Path.of(baseline)).strip()));
        }
        builds.add(new Build("after", System.getProperty("java.class.path")));
        return builds;
    }

    /** Transactions per second on the server and CPU % of one core of an idle worker process. */
    private static double[] idle(BenchDatabase db, Build build, int pools, Duration window, String prefix)
            throws Exception {
        Process child = child(build, "idle-" + prefix, "idle", db.url(), prefix, Integer.toString(pools),
                Integer.toString(SHARDS));
        try {
            awaitLine(child, "READY", Duration.ofMinutes(3));
            // settle: the pass that claimed the last bucket, and the readers' first pages
            TimeUnit.SECONDS.sleep(3);
            long tx0 = transactions(db);
            long cpu0 = cpuNanos(child);
            long t0 = System.nanoTime();
            TimeUnit.NANOSECONDS.sleep(window.toNanos());
            long tx1 = transactions(db);
            long cpu1 = cpuNanos(child);
            double seconds = (System.nanoTime() - t0) / 1e9;
            return new double[] {(tx1 - tx0) / seconds, 100.0 * (cpu1 - cpu0) / 1e9 / seconds};
        } finally {
            stop(child);
        }
    }

    /** p50, p99, max (µs), handled, appended. */
    private static long[] latency(BenchDatabase db, Build build, int rate, int seconds, String prefix) throws Exception {
        Process child = child(build, "latency-" + prefix, "latency", db.url(), prefix, Integer.toString(rate),
                Integer.toString(seconds));
        try {
            String line = awaitLine(child, "LATENCY", Duration.ofMinutes(4));
            String[] parts = line.trim().split(" ");
            long[] values = new long[5];
            for (int i = 0; i < 5; i++) {
                values[i] = Long.parseLong(parts[i + 1]);
            }
            return values;
        } finally {
            stop(child);
        }
    }

    private static Process child(Build build, String label, String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
                build.classPath(), IdleWorkerMain.class.getName()));
        command.addAll(List.of(args));
        File log = new File("target/bench-" + label + "-err.log");
        log.getParentFile().mkdirs();
        return new ProcessBuilder(command).redirectError(log).start();
    }

    /** Reads the child's output until a line starting with {@code prefix}; fails past the timeout. */
    private static String awaitLine(Process child, String prefix, Duration timeout) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (in.ready()) {
                String line = in.readLine();
                if (line == null) {
                    break;
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
            } else if (!child.isAlive()) {
                break;
            } else {
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
        throw new IllegalStateException("the child process did not print " + prefix + " within " + timeout
                + " (alive: " + child.isAlive() + "; see target/bench-*-err.log)");
    }

    private static void stop(Process child) throws InterruptedException {
        try {
            child.getOutputStream().close(); // the idle child stops on the end of its input
        } catch (IOException ignored) {
            // already gone
        }
        if (!child.waitFor(20, TimeUnit.SECONDS)) {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static long cpuNanos(Process child) {
        return child.toHandle().info().totalCpuDuration().map(Duration::toNanos)
                .orElseThrow(() -> new IllegalStateException("the process's CPU time is not available here"));
    }

    /** Committed and rolled-back transactions of the benchmark's database, read from another database. */
    private static long transactions(BenchDatabase db) throws Exception {
        try (Connection c = DriverManager.getConnection(db.adminUrl());
                PreparedStatement p = c.prepareStatement("SELECT xact_commit + xact_rollback FROM pg_stat_database"
                        + " WHERE datname = ?")) {
            p.setString(1, db.name());
            try (ResultSet rs = p.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
