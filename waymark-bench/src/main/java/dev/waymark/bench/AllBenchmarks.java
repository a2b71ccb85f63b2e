package dev.waymark.bench;

import dev.waymark.bench.BenchmarksDoc.Declared;
import dev.waymark.bench.BenchmarksDoc.Entry;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Runs every benchmark in one run, each in a JVM of its own, one after the other, and writes
 * docs/BENCHMARKS.md ({@code -Dbench.out} to write elsewhere). A benchmark that fails or runs past
 * {@code -Dbench.timeout.minutes} (30) is reported as such in its section; the run goes on.
 * {@code -Dbench.quick=true} is a smoke run: 1 round of 1 s cells and a tenth of the events.
 *
 * <p>Adding a benchmark is one line in {@link #ENTRIES} and a template {@code /bench/<key>.md}. A
 * benchmark class that is not on the class path is listed as skipped ("not in this build").
 */
public final class AllBenchmarks {

    /** The command documented in the generated file. */
    static final String COMMAND = "mvn -q -DskipTests -Pbench-all verify -pl waymark-bench -am \\\n"
            + "    -Dbench.url='jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres'"
            + "   # omit bench.url for an embedded PostgreSQL";

    /** Every benchmark of the run, in order; events is the benchmark's bench.events (0: not used). */
    static final List<Item> ENTRIES = List.of(
            new Item(new Entry("append", "Appends", "dev.waymark.bench.AppendBenchmark", List.of(
                    new Declared("2", "Waymark / raw INSERT, 8 writers ≥ 0.70", "—"),
                    new Declared("2", "Waymark / counter row, 8 writers ≥ 3.00", "—"),
                    new Declared("2", "100-event append / raw multi-row INSERT ≥ 0.60", "—")), ""), 0),
            new Item(new Entry("subscription", "Subscriptions", "dev.waymark.bench.SubscriptionBenchmark", List.of(
                    new Declared("3", "catch-up: subscription / raw JDBC scan ≥ 0.50", "—")), ""), 1_000_000),
            new Item(new Entry("shard", "Sharded pool", "dev.waymark.bench.ShardBenchmark", List.of(
                    new Declared("4", "4 workers / 1 worker, 2 ms handler ≥ 3.00×", "—"),
                    new Declared("4", "failover after SIGKILL ≤ leaseTtl + 2 × renewInterval", "—")), ""), 40_000),
            new Item(new Entry("idle", "Idle cost", "dev.waymark.bench.IdleBenchmark", List.of(
                    new Declared("34", "idle server tx/s less the server alone, 1 pool of 16 buckets, after ≤ 1.10"
                            + " tx/s", "—"),
                    new Declared("34", "idle server tx/s less the server alone, 4 pools of 16 buckets, after ≤ 1.40"
                            + " tx/s", "—"),
                    new Declared("34", "idle server tx/s less the server alone, 16 pools of 16 buckets, after ≤ 2.60"
                            + " tx/s", "—"),
                    new Declared("34", "idle statements sent/s, 16 pools of 16 buckets, after ≤ 2.60/s", "—"),
                    new Declared("34", "append-to-handler p99, after / before ≤ 1.00×", "—")), ""), 0),
            new Item(new Entry("workflow", "Workflows", "dev.waymark.bench.WorkflowBenchmark", List.of(
                    new Declared("5", "Waymark steps/s / raw commits, 16 in flight ≥ 0.60", "—"),
                    new Declared("5", "Waymark steps/s / DBOS Transact steps/s, 16 in flight ≥ 3.00×", "—")), ""),
                    0),
            new Item(new Entry("workflow-resume", "Suspending workflows", "dev.waymark.bench.WorkflowResumeBenchmark",
                    List.of(new Declared("33",
                            "suspending workflows' sustained rate / the same without suspension ≥ 0.50",
                            "—"),
                            new Declared("33", "Waymark / DBOS Transact sustained rate, suspending workflow ≥ 2.00×",
                                    "—")),
                    ""), 0),
            new Item(new Entry("messaging", "Messaging runtime", "dev.waymark.bench.MessagingBenchmark", List.of(
                    new Declared("7", "serial runtime / bare loop, no-op handler ≥ 0.80", "—"),
                    new Declared("7", "orderedByKey(16) / serial, 2 ms handler ≥ 10.00×", "—")), ""), 0),
            new Item(new Entry("kafka", "Kafka adapter", "dev.waymark.bench.KafkaBenchmark", List.of(
                    new Declared("8", "KafkaSource serial / raw KafkaConsumer poll loop, no-op handler ≥ 0.80", "—"),
                    new Declared("8", "orderedByKey(16) / serial, 2 ms handler ≥ 8.00×", "—"),
                    new Declared("8", "KafkaSource serial / Spring Kafka container, MANUAL ack per record ≥ 1.00×",
                            "—"),
                    new Declared("32", "KafkaSource serial, 1% retried once / no retries ≥ 0.70", "—"),
                    new Declared("32", "KafkaSource serial, 10% retried once / no retries ≥ 0.30", "—"),
                    new Declared("32", "KafkaSource orderedByKey(16), 1% retried once / no retries ≥ 0.70", "—"),
                    new Declared("32", "KafkaSource orderedByKey(16), 10% retried once / no retries ≥ 0.30", "—"),
                    new Declared("32", "KafkaSource serial / Spring DefaultErrorHandler, 1% retried once ≥ 3.00×",
                            "—"),
                    new Declared("32", "KafkaSource serial / Spring DefaultErrorHandler, 10% retried once ≥ 3.00×",
                            "—")),
                    ""), 1_000_000),
            new Item(new Entry("workflow-recovery", "Workflow recovery and wake-up (tests)", null, List.of(
                    new Declared("6", "crash recovery after SIGKILL ≤ leaseTtl + poll (2.25 s)",
                            "1.83 s median of 3 runs (met in the tests)"),
                    new Declared("6", "push wake-up within tens of ms (fixed loop: the poll interval)",
                            "20 ms median of 5 runs (met in the tests)")),
                    "measured by the tests on 2026-11-29, see the last section"), 0));

    /**
     * A registry line: an entry and its bench.events.
     *
     * @param entry the entry
     * @param events its {@code bench.events} (0 when it takes none)
     */
    record Item(Entry entry, int events) {}

    private AllBenchmarks() {}

    public static void main(String[] args) throws Exception {
        boolean quick = BenchReport.quick();
        Path root = repositoryRoot(Path.of(System.getProperty("user.dir")).toAbsolutePath());
        String outProperty = System.getProperty("bench.out", "");
        Path out = outProperty.isBlank() ? root.resolve("docs/BENCHMARKS.md") : Path.of(outProperty).toAbsolutePath();
        long timeoutMinutes = Long.getLong("bench.timeout.minutes", quick ? 10 : 30);
        Instant started = Instant.now();
        LoadSampler load = new LoadSampler();
        load.start();
        List<String[]> machine = machine();
        List<BenchmarksDoc.Section> sections = new ArrayList<>();
        for (Item item : ENTRIES) {
            Entry e = item.entry();
            if (e.isStatic()) {
                sections.add(new BenchmarksDoc.Section(e, null));
                continue;
            }
            System.out.printf("%n=== %s (%s) ===%n", e.title(), e.className());
            BenchResult r = run(item, quick, timeoutMinutes);
            System.out.printf("=== %s: %s in %.0f s ===%n", e.title(), r.status(), r.seconds());
            sections.add(new BenchmarksDoc.Section(e, r));
        }
        load.interrupt();
        machine.add(new String[]{"load average (1 min) during the run", load.summary()});
        double minutes = (Instant.now().toEpochMilli() - started.toEpochMilli()) / 60_000.0;
        String date = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'").withZone(ZoneOffset.UTC).format(started);
        String doc = BenchmarksDoc.render(new BenchmarksDoc.Run(date, COMMAND, machine, minutes, quick), sections,
                AllBenchmarks::template);
        Files.createDirectories(out.getParent());
        Files.writeString(out, doc, StandardCharsets.UTF_8);
        System.out.printf("%nwrote %s (%.1f minutes)%n", out, minutes);
    }

    /** Runs one benchmark in a child JVM and reads its result; never throws for the benchmark's failures. */
    static BenchResult run(Item item, boolean quick, long timeoutMinutes) throws IOException, InterruptedException {
        Entry e = item.entry();
        try {
            Class.forName(e.className(), false, AllBenchmarks.class.getClassLoader());
        } catch (ClassNotFoundException notHere) {
            return BenchResult.without(BenchResult.Status.SKIPPED, "not in this build: " + e.className()
                    + " is not on the class path (it is merged from another branch).", 0);
        }
        Path resultFile = Files.createTempFile("waymark-bench-" + e.key(), ".bin");
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel="
                + System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        command.add("-Dbench.url=" + System.getProperty("bench.url", ""));
        command.add("-Dbench.seconds=" + (quick ? 1 : Long.getLong("bench.seconds", 3)));
        command.add("-Dbench.rounds=" + (quick ? 1 : Integer.getInteger("bench.rounds", 3)));
        command.add("-Dbench.quick=" + quick);
        command.add("-Dbench.warmup=" + System.getProperty("bench.warmup", ""));
        command.add("-Dbench.baseline.classpath=" + System.getProperty("bench.baseline.classpath", ""));
        command.add("-Dbench.idle.seconds=" + System.getProperty("bench.idle.seconds", ""));
        if (item.events() > 0) {
            command.add("-Dbench.events=" + (quick ? item.events() / 10 : item.events()));
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(BenchChild.class.getName());
        command.add(e.className());
        command.add(resultFile.toString());
        long start = System.nanoTime();
        Process p = new ProcessBuilder(command).inheritIO().start();
        try {
            boolean ended = p.waitFor(timeoutMinutes, TimeUnit.MINUTES);
            double seconds = (System.nanoTime() - start) / 1e9;
            if (!ended) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
                return BenchResult.without(BenchResult.Status.TIMED_OUT, "killed after " + timeoutMinutes
                        + " minutes (-Dbench.timeout.minutes); its database may be left behind", seconds);
            }
            if (Files.size(resultFile) == 0) {
                return BenchResult.without(BenchResult.Status.FAILED, "the benchmark JVM exited with code "
                        + p.exitValue() + " and wrote no result", seconds);
            }
            try (InputStream in = Files.newInputStream(resultFile); ObjectInputStream o = new ObjectInputStream(in)) {
                return (BenchResult) o.readObject();
            } catch (ClassNotFoundException | IOException | ClassCastException unreadable) {
                return BenchResult.without(BenchResult.Status.FAILED, "its result could not be read: " + unreadable,
                        seconds);
            }
        } finally {
            Files.deleteIfExists(resultFile);
        }
    }

    /** The directory holding the root pom that lists waymark-bench as a module, from {@code start} upwards. */
    static Path repositoryRoot(Path start) throws IOException {
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            Path pom = dir.resolve("pom.xml");
            if (Files.isRegularFile(pom) && Files.readString(pom).contains("<module>waymark-bench</module>")) {
                return dir;
            }
        }
        throw new IllegalStateException("no root pom.xml with <module>waymark-bench</module> above " + start
                + "; pass -Dbench.out=<file>");
    }

    /** A section's prose, {@code /bench/<key>.md} on the class path. */
    static String template(String key) {
        try (InputStream in = AllBenchmarks.class.getResourceAsStream("/bench/" + key + ".md")) {
            if (in == null) {
                throw new IllegalStateException("no template /bench/" + key + ".md");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Cores, memory, OS, JDK, PostgreSQL and its settings. */
    private static List<String[]> machine() {
        List<String[]> rows = new ArrayList<>();
        Runtime rt = Runtime.getRuntime();
        rows.add(new String[]{"CPU", rt.availableProcessors() + " cores" + cpuModel()});
        long memory = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize();
        rows.add(new String[]{"memory", String.format(Locale.ROOT, "%.1f GiB", memory / (1024.0 * 1024 * 1024))});
        rows.add(new String[]{"OS", osRelease() + " (" + System.getProperty("os.name") + " "
                + System.getProperty("os.version") + ", " + System.getProperty("os.arch") + ")"});
        rows.add(new String[]{"JDK", System.getProperty("java.vm.vendor") + " " + System.getProperty("java.vm.name")
                + " " + System.getProperty("java.runtime.version") + "; each benchmark in a JVM of its own"});
        try (BenchDatabase db = BenchDatabase.create();
                Connection c = DriverManager.getConnection(db.url());
                Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT version()")) {
                rs.next();
                rows.add(new String[]{"PostgreSQL", rs.getString(1).replaceAll(" on .*", "")
                        + (System.getProperty("bench.url", "").isBlank()
                                ? ", embedded (zonky), one per benchmark"
                                : ", at " + hostOf(System.getProperty("bench.url")))});
            }
            StringBuilder settings = new StringBuilder();
            try (ResultSet rs = s.executeQuery("SELECT name, current_setting(name) FROM pg_settings WHERE name IN"
                    + " ('synchronous_commit', 'fsync', 'full_page_writes', 'wal_level', 'shared_buffers',"
                    + " 'max_connections', 'commit_delay', 'max_wal_size', 'checkpoint_timeout') ORDER BY name")) {
                while (rs.next()) {
                    settings.append(settings.isEmpty() ? "" : ", ").append('`').append(rs.getString(1)).append('=')
                            .append(rs.getString(2)).append('`');
                }
            }
            rows.add(new String[]{"PostgreSQL settings", settings.toString()});
        } catch (Exception e) {
            rows.add(new String[]{"PostgreSQL", "not reachable before the run: " + e});
        }
        rows.add(new String[]{"git commit", gitHead()});
        return rows;
    }

    private static String hostOf(String url) {
        String rest = url.substring(url.indexOf("//") + 2);
        int slash = rest.indexOf('/');
        return slash < 0 ? rest : rest.substring(0, slash);
    }

    private static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .findFirst().map(l -> ", " + l.substring(l.indexOf(':') + 1).strip()).orElse("");
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    private static String osRelease() {
        try {
            return Files.readAllLines(Path.of("/etc/os-release")).stream().filter(l -> l.startsWith("PRETTY_NAME="))
                    .findFirst().map(l -> l.substring(l.indexOf('=') + 1).replace("\"", "")).orElse("?");
        } catch (IOException | RuntimeException e) {
            return System.getProperty("os.name");
        }
    }

    private static String gitHead() {
        try {
            Process p = new ProcessBuilder("git", "describe", "--always", "--dirty").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return p.waitFor() == 0 ? out : "?";
        } catch (IOException e) {
            return "?";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "?";
        }
    }

    /** Samples the 1-minute load average every 10 s: the machine is shared, so say how busy it was. */
    private static final class LoadSampler extends Thread {
        private final List<Double> samples = Collections.synchronizedList(new ArrayList<>());

        LoadSampler() {
            setDaemon(true);
            setName("load-sampler");
        }

        @Override
        public void run() {
            try {
                while (!isInterrupted()) {
                    double l = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
                    if (l >= 0) {
                        samples.add(l);
                    }
                    Thread.sleep(10_000);
                }
            } catch (InterruptedException e) {
                // done
            }
        }

        String summary() {
            List<Double> s;
            synchronized (samples) {
                s = new ArrayList<>(samples);
            }
            if (s.isEmpty()) {
                return "not available";
            }
            Collections.sort(s);
            return String.format(Locale.ROOT, "min %.1f, median %.1f, max %.1f (%d samples, every 10 s) on %d cores",
                    s.get(0), s.get(s.size() / 2), s.get(s.size() - 1), s.size(),
                    Runtime.getRuntime().availableProcessors());
        }
    }
}
