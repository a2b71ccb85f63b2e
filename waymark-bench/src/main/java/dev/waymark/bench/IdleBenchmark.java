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
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What a quiet system costs its database (issue 34), before and after, side by side in one run: a
 * worker process with 1, 4 and 16 idle sharded pools of 16 buckets (default settings, nothing
 * appended), and for each the server's transactions per second in the benchmark's database
 * ({@code pg_stat_database.xact_commit + xact_rollback} deltas, read from another database), the
 * same with no worker process at all (what the server does there on its own: autovacuum), the
 * statements the worker's store handle sent (its query counter), the connections it took from its
 * pool (HikariCP validates one idle for over half a second with an empty statement, itself a
 * transaction) and the process's CPU; then the append-to-handler latency under a paced load.
 *
 * <p>Each measurement runs in a child JVM: "after" on this build, earlier builds on the class
 * paths named by {@code -Dbench.baseline.classpath}: a file holding the class path of an earlier
 * build's waymark-bench (as {@code mvn dependency:build-classpath} writes it), or several as
 * {@code label=file,label=file}; this build's bench classes go first (the child uses only API that
 * those builds had). With {@code -Dbench.idle.bypass=true}, "after" runs once more with HikariCP's
 * validation window ({@code com.zaxxer.hikari.aliveBypassWindowMs}) longer than the renew interval.
 */
public final class IdleBenchmark {

    private static final int SHARDS = 16;
    private static final int[] POOLS = {1, 4, 16};
    /** HikariCP's validation window in the "bypass" build: longer than the 10 s renew interval. */
    private static final String BYPASS = "-Dcom.zaxxer.hikari.aliveBypassWindowMs=15000";

    private IdleBenchmark() {}

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(IdleBenchmark::run);
    }

    /** One build to measure: its label, the child's class path and extra JVM options. */
    private record Build(String label, String classPath, List<String> jvmArgs) {}

    /**
     * One idle cell: server tx/s, library statements/s (-1: unknown), pool checkouts/s, autovacuum
     * runs, CPU %, the window's statements by purpose, sessions opened in the database and
     * autovacuum workers seen there during the window.
     */
    private record Cell(double tps, double statements, double checkouts, long vacuums, double cpu, String byPurpose,
            long sessions, long autovacuumWorkers) {}

    /** Longer than PostgreSQL's 10 s delay before an idle backend flushes its statistics. */
    private static final Duration SETTLE = Duration.ofSeconds(12);

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        String seconds = System.getProperty("bench.idle.seconds", "");
        Duration window = Duration
                .ofSeconds(seconds.isBlank() ? BenchReport.quick() ? 10 : 30 : Integer.parseInt(seconds));
        int rate = Integer.getInteger("bench.rate", 50);
        int latencySeconds = BenchReport.quick() ? 5 : 20;
        List<Build> builds = builds();
        try (BenchDatabase db = BenchDatabase.create()) {
            try (var pool = db.pool(2); EventStore store = EventStore.builder(pool).build()) {
                store.migrate();
            }
            out.setup("idle benchmark: %s; %d cores; %d-bucket pools, default settings (fallbackPoll 1 s, renewInterval"
                    + " 10 s); %d s window per cell after every bucket is claimed and 12 s of settling; latency: %d"
                    + " events/s for %d s, one pool of 16 buckets, writer and reader on separate store handles in one"
                    + " process; builds: %s", db.server(), Runtime.getRuntime().availableProcessors(), SHARDS,
                    window.toSeconds(), rate, latencySeconds, String.join(", ", builds.stream().map(Build::label)
                            .toList()));
            Cell quiet = background(db, window);
            out.progress("no worker process: %.2f tx/s", quiet.tps());
            out.println("| idle pools of 16 buckets | build | server tx/s | less the server alone | statements sent/s"
                    + " | pool checkouts/s | autovacuum workers / runs | new sessions | CPU % of a core | statements in the"
                    + " window |");
            out.println("|---:|---|---:|---:|---:|---:|---:|---:|---:|---|");
            out.println(String.format(Locale.US, "| 0 | no worker process | %.2f | — | — | — | %d / %d | %d | — | — |",
                    quiet.tps(), quiet.autovacuumWorkers(), quiet.vacuums(), quiet.sessions()));
            Cell[][] cells = new Cell[builds.size()][POOLS.length];
            for (int i = 0; i < POOLS.length; i++) {
                for (int b = 0; b < builds.size(); b++) {
                    Cell c = idle(db, builds.get(b), POOLS[i], window, "i" + b + "p" + POOLS[i]);
                    cells[b][i] = c;
                    out.println(String.format(Locale.US,
                            "| %d | %s | %.2f | %.2f | %s | %.2f | %d / %d | %d | %.2f | %s |",
                            POOLS[i], builds.get(b).label(), c.tps(), c.tps() - quiet.tps(), c.statements() < 0
                                    ? "—"
                                    : String.format(Locale.US, "%.2f", c.statements()),
                            c.checkouts(),
                            c.autovacuumWorkers(), c.vacuums(), c.sessions(), c.cpu(), c.statements() < 0
                                    ? "—"
                                    : c.byPurpose()));
                    out.progress("%s, %d pools: %.2f tx/s, %.2f statements/s, %.2f checkouts/s, %.2f %% CPU",
                            builds.get(b).label(), POOLS[i], c.tps(), c.statements(), c.checkouts(), c.cpu());
                }
            }
            Cell quietAfter = background(db, window);
            out.println(String.format(Locale.US,
                    "| 0 | no worker process, after the cells | %.2f | — | — | — | %d / %d | %d"
                            + " | — | — |",
                    quietAfter.tps(), quietAfter.autovacuumWorkers(), quietAfter.vacuums(),
                    quietAfter.sessions()));
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
                    row.append(String.format(Locale.US, " %.1f |", l[k] / 1000.0));
                }
                out.println(row.toString());
            }
            StringBuilder handled = new StringBuilder("| handled / appended |");
            for (long[] l : latencies) {
                handled.append(" ").append(l[3]).append(" / ").append(l[4]).append(" |");
            }
            out.println(handled.toString());
            out.println();

            int after = builds.stream().map(Build::label).toList().indexOf("after");
            int first = 0;
            double background = (quiet.tps() + quietAfter.tps()) / 2;
            for (int i = 0; i < POOLS.length; i++) {
                // at most one transaction per pool per renew interval (10 s) and one probe per fallback interval (1 s)
                double bound = POOLS[i] / 10.0 + 1;
                out.target("34", "idle server tx/s less the server alone, " + POOLS[i] + " pool" + (POOLS[i] == 1
                        ? ""
                        : "s") + " of 16 buckets, after", cells[after][i].tps() - background,
                        BenchResult.Comparison.AT_MOST, bound, " tx/s",
                        "what the pool sends on its own (HikariCP's keepalive) counts too");
            }
            out.target("34", "idle statements sent/s, 16 pools of 16 buckets, after", cells[after][2].statements(),
                    BenchResult.Comparison.AT_MOST, 16 / 10.0 + 1, "/s", "the library's own query counter");
            if (builds.size() > 1) {
                out.target("34", "append-to-handler p99, after / " + builds.get(first).label(),
                        (double) latencies.get(after)[1] / Math.max(1, latencies.get(first)[1]),
                        BenchResult.Comparison.AT_MOST, 1.0, "×", "no worse");
            }
        }
    }

    private static List<Build> builds() throws IOException {
        List<Build> builds = new ArrayList<>();
        String baseline = System.getProperty("bench.baseline.classpath", "");
        String benchClasses = new File(IdleWorkerMain.class.getProtectionDomain().getCodeSource().getLocation()
                .getPath()).getPath();
        for (String entry : baseline.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            int eq = entry.indexOf('=');
            String label = eq < 0 ? "before" : entry.substring(0, eq).strip();
            String file = eq < 0 ? entry.strip() : entry.substring(eq + 1).strip();
            builds.add(new Build(label, benchClasses + File.pathSeparator + Files.readString(Path.of(file)).strip(),
                    List.of()));
        }
        String own = System.getProperty("java.class.path");
        builds.add(new Build("after", own, List.of()));
        if (Boolean.getBoolean("bench.idle.bypass")) {
            builds.add(new Build("after, pool validation window 15 s", own, List.of(BYPASS)));
        }
        return builds;
    }

    /** The benchmark's database with no worker process, over the same window. */
    private static Cell background(BenchDatabase db, Duration window) throws Exception {
        long vacuums0 = vacuums(db);
        TimeUnit.MILLISECONDS.sleep(SETTLE.toMillis());
        long tx0 = transactions(db);
        long t0 = System.nanoTime();
        long[] sessions = watchWindow(db, window);
        long tx1 = transactions(db);
        double seconds = (System.nanoTime() - t0) / 1e9;
        return new Cell((tx1 - tx0) / seconds, -1, 0, vacuums(db) - vacuums0, 0, "", sessions[0], sessions[1]);
    }

    /** Transactions per second on the server, statements and checkouts of an idle worker process, its CPU. */
    private static Cell idle(BenchDatabase db, Build build, int pools, Duration window, String prefix)
            throws Exception {
        Process child = child(build, "idle-" + prefix, "idle", db.url(), prefix, Integer.toString(pools),
                Integer.toString(SHARDS));
        BufferedReader in = output(child);
        try {
            awaitLine(child, in, "READY", Duration.ofMinutes(3));
            // read first: the reading connection's own transactions reach the statistics before the window
            long vacuums0 = vacuums(db);
            // settle: the pass that claimed the last bucket, the readers' first pages, and the
            // statistics of those transactions, which a backend gone idle flushes up to 10 s late
            TimeUnit.MILLISECONDS.sleep(SETTLE.toMillis());
            long tx0 = transactions(db);
            Counts count0 = count(child, in);
            long cpu0 = cpuNanos(child);
            long t0 = System.nanoTime();
            long[] sessions = watchWindow(db, window);
            Counts count1 = count(child, in);
            long cpu1 = cpuNanos(child);
            signal(child, "STOP");
            double seconds = (System.nanoTime() - t0) / 1e9;
            TimeUnit.MILLISECONDS.sleep(SETTLE.toMillis()); // the frozen child's backends flush their statistics
            long tx1 = transactions(db);
            signal(child, "CONT");
            return new Cell((tx1 - tx0) / seconds, count0.statements() < 0
                    ? -1
                    : (count1.statements() - count0.statements()) / seconds,
                    (count1.checkouts() - count0.checkouts())
                            / seconds,
                    vacuums(db) - vacuums0, 100.0 * (cpu1 - cpu0) / 1e9 / seconds, count1.since(count0),
                    sessions[0], sessions[1]);
        } finally {
            stop(child);
        }
    }

    /** The idle child's pool checkouts and statements sent so far, in all and by purpose. */
    private static Counts count(Process child, BufferedReader in) throws Exception {
        child.getOutputStream().write("COUNT\n".getBytes(StandardCharsets.UTF_8));
        child.getOutputStream().flush();
        String[] parts = awaitLine(child, in, "COUNT", Duration.ofSeconds(30)).trim().split(" ");
        Map<String, Long> byPurpose = new LinkedHashMap<>();
        for (int i = 3; i < parts.length; i++) {
            String[] kv = parts[i].split("=");
            byPurpose.put(kv[0], Long.parseLong(kv[1]));
        }
        return new Counts(Long.parseLong(parts[1]), Long.parseLong(parts[2]), byPurpose);
    }

    /** What an idle child reported: pool checkouts, statements (-1: unknown) and statements by purpose. */
    private record Counts(long checkouts, long statements, Map<String, Long> byPurpose) {

        /** The statements of each purpose sent since {@code earlier}, those with none left out. */
        String since(Counts earlier) {
            StringBuilder s = new StringBuilder();
            byPurpose.forEach((purpose, n) -> {
                long d = n - earlier.byPurpose.getOrDefault(purpose, 0L);
                if (d != 0) {
                    s.append(s.isEmpty() ? "" : ", ").append(purpose).append(' ').append(d);
                }
            });
            return s.isEmpty() ? "—" : s.toString();
        }
    }

    /**
     * Freezes the child (SIGSTOP) so that its backends go idle: PostgreSQL flushes an idle
     * backend's pending statistics within 10 s ({@code PGSTAT_IDLE_INTERVAL}), after which the
     * transaction count is exact up to the moment of the freeze.
     */
    private static void signal(Process child, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(child.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + signal + " " + child.pid() + " failed");
        }
    }

    /** p50, p99, max (µs), handled, appended. */
    private static long[] latency(BenchDatabase db, Build build, int rate, int seconds, String prefix)
            throws Exception {
        Process child = child(build, "latency-" + prefix, "latency", db.url(), prefix, Integer.toString(rate),
                Integer.toString(seconds));
        try {
            String line = awaitLine(child, output(child), "LATENCY", Duration.ofMinutes(4));
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
        List<String> command = new ArrayList<>(List.of(java, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        command.addAll(build.jvmArgs());
        command.addAll(List.of("-cp", build.classPath(), IdleWorkerMain.class.getName()));
        command.addAll(List.of(args));
        File log = new File("target/bench-" + label + "-err.log");
        log.getParentFile().mkdirs();
        return new ProcessBuilder(command).redirectError(log).start();
    }

    /** The child's standard output, read through one buffer for all its lines. */
    private static BufferedReader output(Process child) {
        return new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Reads the child's output until a line starting with {@code prefix}; fails past the timeout. */
    private static String awaitLine(Process child, BufferedReader in, String prefix, Duration timeout)
            throws Exception {
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

    /**
     * Waits out the window, looking every 250 ms from another database at the benchmark's
     * database: sessions opened there during the window (each costs a few transactions to set up)
     * and distinct autovacuum workers seen there (a visit costs a few transactions even when it
     * vacuums nothing).
     */
    private static long[] watchWindow(BenchDatabase db, Duration window) throws Exception {
        java.util.Set<Integer> workers = new java.util.HashSet<>();
        long sessions0 = -1;
        long sessions1 = -1;
        long end = System.nanoTime() + window.toNanos();
        try (Connection c = DriverManager.getConnection(db.adminUrl());
                PreparedStatement s = c.prepareStatement("SELECT sessions FROM pg_stat_database WHERE datname = ?");
                PreparedStatement a = c.prepareStatement("SELECT pid FROM pg_stat_activity WHERE datname = ?"
                        + " AND backend_type = 'autovacuum worker'")) {
            s.setString(1, db.name());
            a.setString(1, db.name());
            while (true) {
                try (ResultSet rs = a.executeQuery()) {
                    while (rs.next()) {
                        workers.add(rs.getInt(1));
                    }
                }
                try (Statement clear = c.createStatement()) {
                    clear.execute("SELECT pg_stat_clear_snapshot()");
                }
                try (ResultSet rs = s.executeQuery()) {
                    rs.next();
                    sessions1 = rs.getLong(1);
                    sessions0 = sessions0 < 0 ? sessions1 : sessions0;
                }
                long left = end - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(250)));
            }
        }
        return new long[]{sessions1 - sessions0, workers.size()};
    }

    /**
     * Autovacuum and autoanalyze runs so far on the benchmark's tables (they are transactions of its
     * database too), read on a connection to it.
     */
    private static long vacuums(BenchDatabase db) throws Exception {
        try (Connection c = DriverManager.getConnection(db.url());
                PreparedStatement p = c.prepareStatement("SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0)"
                        + " FROM pg_stat_all_tables");
                ResultSet rs = p.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
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
