package dev.waymark.chaos;

import dev.waymark.testkit.KafkaBroker;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Injects faults on a schedule drawn from {@code new Random(seed)}: after a pause of 2 to 6 s it
 * picks one of the {@link Kind}s and a target, runs it, logs it with a timestamp, and repeats until
 * {@link #stop()}. The first {@code Kind.values().length} faults are every kind once, in a seeded
 * order (so a run of a minute or more injects each kind); after that kinds are drawn by weight. A
 * fault that could not be injected (no backend to terminate) is logged as skipped, not counted, and
 * its kind is tried again next. The schedule (kinds, targets, pauses) follows from the seed; what the
 * system is doing when a fault lands does not (real processes, real time). A fault that throws stops
 * the driver: {@link #failure()} says why, and the run fails.
 */
final class FaultDriver {

    /** The kinds of fault. */
    enum Kind {
        /** SIGKILL a random worker JVM, then start a new one in its slot. */
        KILL_WORKER(3),
        /** {@code pg_terminate_backend} on 1 to 4 random backends of the chaos database. */
        TERMINATE_BACKENDS(3),
        /** SIGSTOP a random worker past the lease TTL, then SIGCONT: a zombie. */
        PAUSE_WORKER(2),
        /**
         * SIGSTOP a random worker while one of its Waymark transactions holds lease rows (and a
         * transaction id), for longer than the transactions' bound, then SIGCONT (DESIGN decision 8).
         */
        FREEZE_IN_TRANSACTION(2),
        /** Crash the embedded PostgreSQL (SIGKILL to the postmaster and its processes) and start it again: crash recovery. */
        RESTART_POSTGRES(2),
        /** Stop the Kafka broker for 1 to 4 s and start it again on the same port. */
        RESTART_KAFKA(2);

        final int weight;

        Kind(int weight) {
            this.weight = weight;
        }
    }

    private final Random random;
    /** Kinds owed before weighted picks: every kind once at the start, and a skipped fault's kind again. */
    private final Deque<Kind> owed = new ArrayDeque<>();
    private final ChaosWorkers workers;
    private final ChaosPostgres postgres;
    private final KafkaBroker kafka;
    private final ChaosLog log;
    private volatile boolean running = true;
    private final Thread thread;
    private volatile Throwable failure;

    FaultDriver(long seed, ChaosWorkers workers, ChaosPostgres postgres, KafkaBroker kafka, ChaosLog log) {
        this.random = new Random(seed);
        List<Kind> firstRound = new ArrayList<>(Arrays.asList(Kind.values()));
        Collections.shuffle(firstRound, random);
        owed.addAll(firstRound);
        this.workers = workers;
        this.postgres = postgres;
        this.kafka = kafka;
        this.log = log;
        this.thread = Thread.ofPlatform().name("chaos-faults").start(this::run);
    }

    private void run() {
        try {
            while (running) {
                pace(Duration.ofMillis(2000 + random.nextInt(4000)));
                if (!running) {
                    break;
                }
                Kind kind = pick();
                if (!inject(kind)) {
                    owed.addLast(kind); // the other kinds owed go first: one that found no window cannot take the phase
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Throwable e) {
            failure = e;
            log.note("fault driver failed: " + e);
        }
    }

    private Kind pick() {
        if (!owed.isEmpty()) {
            return owed.removeFirst();
        }
        int total = 0;
        for (Kind k : Kind.values()) {
            total += k.weight;
        }
        int r = random.nextInt(total);
        for (Kind k : Kind.values()) {
            r -= k.weight;
            if (r < 0) {
                return k;
            }
        }
        throw new IllegalStateException();
    }

    /** Injects one fault of {@code kind}; false when it was skipped (logged, not counted). */
    private boolean inject(Kind kind) throws Exception {
        switch (kind) {
            case KILL_WORKER -> {
                int slot = random.nextInt(workers.size());
                Duration down = Duration.ofMillis(random.nextInt(1500));
                ChaosWorkers.Worker w = workers.get(slot);
                workers.kill(slot);
                log.fault(kind.name(), "SIGKILL " + w.label() + " (pid " + w.pid() + ", worker " + w.workerId()
                        + "); restarting in " + down.toMillis() + " ms");
                pace(down);
                ChaosWorkers.Worker next = workers.start(slot);
                log.note("  restarted slot " + slot + " as " + next.label() + " (pid " + next.pid() + ")");
            }
            case TERMINATE_BACKENDS -> {
                int wanted = 1 + random.nextInt(4);
                List<Long> terminated = new ArrayList<>();
                try (Connection c = DriverManager.getConnection(postgres.jdbcUrl());
                        Statement s = c.createStatement()) {
                    List<Long> pids = new ArrayList<>();
                    try (ResultSet rs = s
                            .executeQuery("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                                    + " AND pid <> pg_backend_pid() AND backend_type = 'client backend' ORDER BY pid")) {
                        while (rs.next()) {
                            pids.add(rs.getLong(1));
                        }
                    }
                    int others = pids.size();
                    for (int i = 0; i < wanted && !pids.isEmpty(); i++) {
                        long pid = pids.remove(random.nextInt(pids.size()));
                        try (ResultSet rs = s.executeQuery("SELECT pg_terminate_backend(" + pid + ")")) {
                            rs.next();
                            if (rs.getBoolean(1)) {
                                terminated.add(pid);
                            }
                        }
                    }
                    if (terminated.isEmpty()) {
                        log.note("  SKIPPED " + kind.name() + ": none of " + others + " other backends terminated");
                        return false;
                    }
                    log.fault(kind.name(), "terminated backends " + terminated + " of " + others
                            + " others");
                } catch (java.sql.SQLException e) {
                    log.note("  SKIPPED " + kind.name() + ": could not terminate backends (" + e.getMessage() + ")");
                    return false;
                }
            }
            case PAUSE_WORKER -> {
                int slot = random.nextInt(workers.size());
                Duration paused = ChaosWorker.TTL.plus(Duration.ofMillis(1000 + random.nextInt(2500)));
                ChaosWorkers.Worker w = workers.get(slot);
                workers.signal(slot, true);
                log.fault(kind.name(), "SIGSTOP " + w.label() + " (pid " + w.pid() + ") for " + paused.toMillis()
                        + " ms (lease TTL " + ChaosWorker.TTL.toMillis() + " ms)");
                pace(paused);
                workers.signal(slot, false);
                log.note("  SIGCONT " + w.label());
            }
            case FREEZE_IN_TRANSACTION -> {
                int slot = random.nextInt(workers.size());
                Duration frozen = ChaosWorker.TX_BOUND.plus(Duration.ofMillis(1000 + random.nextInt(2500)));
                ChaosWorkers.Worker w = workers.get(slot);
                java.nio.file.Path release = workers.releaseFile(slot);
                try {
                    String statement = workers.freezeInTransaction(slot, release, Duration.ofSeconds(10));
                    if (statement == null) {
                        log.note(
                                "  SKIPPED " + kind.name() + ": " + w.label() + " opened no lease transaction in 10 s");
                        return false;
                    }
                    workers.signal(slot, true);
                    log.fault(kind.name(),
                            "SIGSTOP " + w.label() + " (pid " + w.pid() + ") inside a lease transaction ("
                                    + statement + "...) for " + frozen.toMillis() + " ms (transaction bound "
                                    + ChaosWorker.TX_BOUND.toMillis() + " ms, lease TTL " + ChaosWorker.TTL.toMillis()
                                    + " ms)");
                    pace(frozen);
                } finally {
                    java.nio.file.Files.createFile(release);
                }
                workers.signal(slot, false);
                log.note("  SIGCONT " + w.label());
            }
            case RESTART_POSTGRES -> {
                long started = System.nanoTime();
                int killed = postgres.crashAndRestart();
                log.fault(kind.name(), "SIGKILL to the PostgreSQL postmaster and its " + (killed - 1) + " processes"
                        + " on port " + postgres.port() + "; restarted after crash recovery ("
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms down)");
            }
            case RESTART_KAFKA -> {
                Duration down = Duration.ofMillis(1000 + random.nextInt(3000));
                long started = System.nanoTime();
                kafka.stopBroker();
                log.fault(kind.name(), "Kafka broker stopped for " + down.toMillis() + " ms");
                try {
                    pace(down);
                } finally {
                    kafka.startBroker();
                }
                log.note("  Kafka broker back after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)
                        + " ms");
            }
            default -> throw new IllegalStateException(kind.name());
        }
        return true;
    }

    private static void pace(Duration d) throws InterruptedException {
        TimeUnit.NANOSECONDS.sleep(d.toNanos()); // the seeded schedule's pacing, not a wait for a condition
    }

    /** Stops injecting after the fault in progress and waits for it to finish (a driver still busy after 3 minutes is a failure). */
    void stop() throws InterruptedException {
        running = false; // no interrupt: a fault in progress (a paused worker, a stopped broker) is completed
        thread.join(TimeUnit.MINUTES.toMillis(3));
        if (thread.isAlive() && failure == null) {
            failure = new IllegalStateException("the fault driver did not stop within 3 minutes");
        }
    }

    /** Why the driver stopped early (a fault threw), or null when it ran until {@link #stop()}. */
    Throwable failure() {
        return failure;
    }
}
