package dev.waymark.chaos;

import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventStore;
import dev.waymark.testkit.KafkaBroker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One chaos run: a dedicated embedded PostgreSQL, the JVM's in-process Kafka broker, {@link #WORKERS}
 * worker JVMs, the load, the faults for {@code duration}, then a quiet period (faults stopped, every
 * worker running, load stopped) until everything drained, and the audit. {@link #run()} returns the
 * report; it never throws for a violated invariant (the report says so). A run passes only when its
 * faults and load really ran ({@link RunChecks}) and every invariant held.
 */
final class ChaosRun {

    static final int WORKERS = 3;
    static final int PARTITIONS = 3;
    /** Longest quiet period allowed for draining after the faults stop. */
    static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(3);

    /** What a run produced. */
    record Result(long seed, Duration duration, boolean passed, String markdown) {}

    private final long seed;
    private final Duration duration;
    private final Path workDir;

    ChaosRun(long seed, Duration duration, Path workDir) {
        this.seed = seed;
        this.duration = duration;
        this.workDir = workDir;
    }

    Result run() throws Exception {
        Instant startedAt = Instant.now();
        long t0 = System.nanoTime();
        String topic = "chaos-" + Long.toString(System.currentTimeMillis(), 36);
        Map<String, Long> counts = new LinkedHashMap<>();
        List<Auditor.Check> checks = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        Map<String, Integer> faults;
        List<String> timeline;
        Throwable faultDriverFailure;
        Duration drainTook = null;
        long processorRestarts;
        String loadSummary;
        try (ChaosLog log = new ChaosLog(workDir.resolve("chaos.log"));
                ChaosPostgres postgres = new ChaosPostgres(workDir.resolve("pgdata"))) {
            log.note("chaos run: seed " + seed + ", duration " + duration + ", PostgreSQL port " + postgres.port());
            KafkaBroker kafka = KafkaBroker.get();
            try (Admin admin = Admin
                    .create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1),
                        new NewTopic(topic + ".DLT", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(postgres.jdbcUrl());
            config.setMaximumPoolSize(6);
            config.setConnectionTimeout(5_000);
            config.setPoolName("chaos-driver");
            try (HikariDataSource ds = new HikariDataSource(config);
                    EventStore store = EventStore.builder(ds).build()) {
                store.migrate();
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute(
                            "CREATE TABLE handled (id bigserial PRIMARY KEY, event_id uuid NOT NULL, stream text NOT NULL,"
                                    + " version bigint NOT NULL, bucket int NOT NULL, epoch bigint NOT NULL, pid bigint NOT NULL,"
                                    + " at timestamptz NOT NULL DEFAULT clock_timestamp())");
                    s.execute("CREATE INDEX handled_event ON handled (event_id)");
                    s.execute(
                            "CREATE TABLE wf_effects (id bigserial PRIMARY KEY, workflow text NOT NULL, step text NOT NULL,"
                                    + " pid bigint NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())");
                    s.execute(
                            "CREATE TABLE kafka_handled (id bigserial PRIMARY KEY, topic text NOT NULL, kpartition int"
                                    + " NOT NULL, koffset bigint NOT NULL, key text, pid bigint NOT NULL,"
                                    + " at timestamptz NOT NULL DEFAULT clock_timestamp())");
                }
                Auditor auditor = new Auditor(postgres.jdbcUrl(), kafka.bootstrapServers(), topic, PARTITIONS, log);
                try (ChaosWorkers workers = new ChaosWorkers(WORKERS, postgres.jdbcUrl(), kafka.bootstrapServers(),
                        topic,
                        workDir.resolve("workers"))) {
                    for (int i = 0; i < WORKERS; i++) {
                        ChaosWorkers.Worker w = workers.start(i);
                        log.note("started " + w.label() + " (pid " + w.pid() + ", worker " + w.workerId() + ")");
                    }
                    auditor.startContinuous();
                    LoadDriver load = new LoadDriver(store, kafka.bootstrapServers(), topic, seed, log);
                    FaultDriver faultDriver = new FaultDriver(seed, workers, postgres, kafka, log);
                    long faultsUntil = System.nanoTime() + duration.toNanos();
                    while (System.nanoTime() < faultsUntil && faultDriver.failure() == null) {
                        TimeUnit.MILLISECONDS.sleep(Math.min(1000, Math.max(1,
                                TimeUnit.NANOSECONDS.toMillis(faultsUntil - System.nanoTime())))); // the run's length
                    }
                    faultDriver.stop();
                    faultDriverFailure = faultDriver.failure();
                    if (faultDriverFailure != null) {
                        notes.add("the fault driver failed, so the faults stopped early: " + faultDriverFailure);
                    }
                    log.note("faults stopped; quiet period: every worker running, load stopping, waiting to drain");
                    workers.ensureAllRunning();
                    load.close();
                    loadSummary = load.summary();
                    long drainStarted = System.nanoTime();
                    try {
                        await("everything drained").atMost(DRAIN_TIMEOUT).pollInterval(Duration.ofSeconds(1))
                                .ignoreExceptions().until(() -> auditor.drained(store));
                        drainTook = Duration.ofNanos(System.nanoTime() - drainStarted);
                        log.note("drained in " + drainTook.toMillis() + " ms");
                    } catch (ConditionTimeoutException e) {
                        notes.add(
                                "not drained within " + DRAIN_TIMEOUT + " of quiet: the checks below say what is left");
                        log.note("NOT drained within " + DRAIN_TIMEOUT);
                    }
                    auditor.sample(); // one last continuous sample on the quiet system
                    auditor.stopContinuous();
                    checks.add(RunChecks.load(load.appended.get(), load.workflowsStarted.get(), load.recordsAcked.get(),
                            load.poisonAcked.get()));
                    checks.addAll(auditor.finalAudit(store, load, counts));
                }
                processorRestarts = countInLogs(workDir.resolve("workers"), "PROCESSOR_FAILED");
            }
            faults = log.faults();
            // a run that never disturbed the system passes nothing: these come first in the report
            checks.add(0, RunChecks.faultDriver(faultDriverFailure));
            checks.add(1, RunChecks.faultsInjected(faults, duration));
            for (Auditor.Check c : checks) {
                log.note((c.held() ? "held     " : "VIOLATED ") + c.name() + " — " + c.detail());
            }
            timeline = log.lines();
        }
        boolean passed = checks.stream().allMatch(Auditor.Check::held);
        String markdown = report(startedAt, Duration.ofNanos(System.nanoTime() - t0), faults, counts, checks, notes,
                drainTook, processorRestarts, loadSummary, passed, timeline);
        return new Result(seed, duration, passed, markdown);
    }

    /** The CPU model and memory, from /proc where there is one. */
    private static String machine() {
        String cpu = "unknown CPU";
        String memory = "";
        try {
            cpu = Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse(cpu);
            memory = Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal"))
                    .map(l -> ", " + Long.parseLong(l.replaceAll("[^0-9]", "")) / (1024 * 1024) + " GiB RAM")
                    .findFirst().orElse("");
        } catch (IOException | RuntimeException e) {
            // not Linux: the JVM's view below is enough
        }
        return cpu + memory;
    }

    private static long countInLogs(Path dir, String marker) throws IOException {
        long n = 0;
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                n += Files.readAllLines(f).stream().filter(l -> l.contains(marker)).count();
            }
        }
        return n;
    }

    private String report(Instant startedAt, Duration wall, Map<String, Integer> faults, Map<String, Long> counts,
            List<Auditor.Check> checks, List<String> notes, Duration drainTook, long processorRestarts,
            String loadSummary, boolean passed, List<String> timeline) {
        StringBuilder b = new StringBuilder();
        b.append("# Chaos run report\n\n");
        b.append("| | |\n|---|---|\n");
        b.append("| result | ").append(passed
                ? "**PASSED**: faults and load ran, no invariant violated"
                : "**FAILED**: see the violated checks")
                .append(" |\n");
        b.append("| seed | `").append(seed).append("` |\n");
        b.append("| fault phase | ").append(duration).append(" |\n");
        b.append("| wall time (setup, faults, quiet period, audit) | ").append(wall.toSeconds()).append(" s |\n");
        b.append("| quiet period until drained | ")
                .append(drainTook == null ? "not drained" : drainTook.toMillis() + " ms")
                .append(" |\n");
        b.append("| started | ").append(startedAt).append(" |\n");
        b.append("| machine | ").append(machine()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" CPUs available, ")
                .append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version"))
                .append(", Java ")
                .append(System.getProperty("java.version")).append(" |\n");
        b.append(
                "| reproduce | `mvn -B -ntp verify -pl waymark-chaos -am -Dtest=ChaosTest -Dsurefire.failIfNoSpecifiedTests=false"
                        + " -Dchaos.seed=")
                .append(seed).append(" -Dchaos.duration=").append(duration).append("` |\n\n");
        b.append("Topology: ").append(WORKERS).append(" worker JVMs, each a member of the sharded pool `")
                .append(ChaosWorker.POOL).append("` (").append(ChaosWorker.SHARDS).append(" buckets, lease TTL ")
                .append(ChaosWorker.TTL.toMillis()).append(" ms, renew ").append(ChaosWorker.RENEW.toMillis())
                .append(" ms), a workflow engine + resume worker (lease TTL ").append(ChaosWorker.TTL.toMillis())
                .append(" ms) running `").append(ChaosWorker.FLOW).append("` (step, durable sleep, child `")
                .append(ChaosWorker.CHILD).append("` with two steps, step) and a Kafka processor (`orderedByKey(4)`, ")
                .append(PARTITIONS)
                .append(" partitions, poison records to `<topic>.DLT`), against one dedicated embedded"
                        + " PostgreSQL and one in-process Kafka broker.\n\n");
        b.append("Load: ").append(loadSummary).append(".\n\n");
        b.append("## Faults injected\n\n| kind | count |\n|---|---|\n");
        int total = 0;
        for (FaultDriver.Kind k : FaultDriver.Kind.values()) {
            int n = faults.getOrDefault(k.name(), 0);
            total += n;
            b.append("| ").append(k.name()).append(" | ").append(n).append(" |\n");
        }
        b.append("| total | ").append(total).append(" |\n\n");
        b.append("Kafka processor failures restarted by the worker's supervisor loop: ").append(processorRestarts)
                .append(".\n\n");
        b.append("## Invariants\n\n| invariant | result | measured |\n|---|---|---|\n");
        for (Auditor.Check c : checks) {
            b.append("| ").append(c.name()).append(" | ").append(c.held() ? "held" : "**VIOLATED**").append(" | ")
                    .append(c.detail().replace("|", "\\|")).append(" |\n");
        }
        b.append(
                "\n## Counts (duplicates are at-least-once redeliveries, reported, not failures)\n\n| | |\n|---|---|\n");
        counts.forEach((k, v) -> b.append("| ").append(k).append(" | ").append(v).append(" |\n"));
        if (!notes.isEmpty()) {
            b.append("\n## Notes\n\n");
            notes.forEach(n -> b.append("- ").append(n).append('\n'));
        }
        b.append(
                "\n## Fault log\n\n<details><summary>every fault and note of the run, with timestamps</summary>\n\n```\n");
        timeline.forEach(line -> b.append(line).append('\n'));
        b.append("```\n\n</details>\n");
        return b.toString();
    }
}
