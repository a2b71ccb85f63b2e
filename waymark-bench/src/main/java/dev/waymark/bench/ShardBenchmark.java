package dev.waymark.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import java.io.File;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

/**
 * The sharded pool, side by side in one run: drain throughput of 4 workers against 1 worker (16
 * buckets, a 2 ms handler, each worker with its own store handle and pool), and the failover time
 * after a worker process is killed with SIGKILL (median of several kills).
 */
public final class ShardBenchmark {

    private static final int SHARDS = 16;
    private static final Duration HANDLER = Duration.ofMillis(2);

    private ShardBenchmark() {}

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(ShardBenchmark::run);
    }

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        int events = Integer.getInteger("bench.events", 40_000);
        int rounds = Integer.getInteger("bench.rounds", 3);
        try (BenchDatabase db = BenchDatabase.create();
                HikariDataSource pool = db.pool(8);
                EventStore store = EventStore.builder(pool).build()) {
            store.migrate();
            out.setup("shard benchmark: %s; %d cores; %d buckets, %d ms handler; %,d events; %d round(s), median;"
                    + " %d kill(s)", db.server(), Runtime.getRuntime().availableProcessors(), SHARDS,
                    HANDLER.toMillis(),
                    events, rounds, rounds);
            load(store, "drain", events);
            List<Double> one = new ArrayList<>();
            List<Double> four = new ArrayList<>();
            List<Double> oneBound = new ArrayList<>();
            List<Double> fourBound = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                one.add(drain(db, "one-" + round, 1, events, false));
                four.add(drain(db, "four-" + round, 4, events, false));
                oneBound.add(drain(db, "oneb-" + round, 1, events, true));
                fourBound.add(drain(db, "fourb-" + round, 4, events, true));
            }
            out.printf("| drain %,d events, 16 buckets | 1 worker ev/s | 4 workers ev/s | ratio |%n", events);
            out.println("|---|---:|---:|---:|");
            out.printf("| 2 ms handler that waits (park) | %,.0f | %,.0f | %.2f |%n", median(one), median(four),
                    median(four) / median(one));
            out.printf("| 2 ms handler on the worker's own 2-connection pool (`pg_sleep`) | %,.0f | %,.0f | %.2f |%n%n",
                    median(oneBound), median(fourBound), median(fourBound) / median(oneBound));
            out.target("4", "4 workers / 1 worker, 2 ms handler that waits (park)", median(four) / median(one),
                    BenchResult.Comparison.AT_LEAST, 3.0, "×", "the issue's literal set-up");
            out.target("4", "4 workers / 1 worker, 2 ms handler on the worker's own 2-connection pool",
                    median(fourBound) / median(oneBound), BenchResult.Comparison.AT_LEAST, 3.0, "×",
                    "a worker bound by its own resources");

            failover(out, db, store, pool, rounds);
        }
    }

    private static void load(EventStore store, String category, int events) {
        List<EventData> batch = IntStream.range(0, 100).mapToObj(i -> EventData.json("Work", "{}")).toList();
        for (int i = 0; i < events / 100; i++) {
            store.append(category + "-" + (i % 400), ExpectedVersion.any(), batch);
        }
    }

    private static double drain(BenchDatabase db, String name, int workers, int events, boolean poolBound)
            throws InterruptedException {
        AtomicLong handled = new AtomicLong();
        List<HikariDataSource> pools = new ArrayList<>();
        List<EventStore> stores = new ArrayList<>();
        List<ShardedSubscription> running = new ArrayList<>();
        long start = System.nanoTime();
        for (int w = 0; w < workers; w++) {
            HikariDataSource p = db.pool(8);
            pools.add(p);
            HikariDataSource work = db.pool(2); // the application's own per-process resources
            pools.add(work);
            EventStore s = EventStore.builder(p).build();
            stores.add(s);
            running.add(ShardedSubscription.builder(s, name, Target.category("drain")).shards(SHARDS)
                    .leaseTtl(Duration.ofSeconds(3)).renewInterval(Duration.ofMillis(500))
                    .start(d -> {
                        if (poolBound) {
                            try (Connection c = work.getConnection(); Statement st = c.createStatement()) {
                                st.execute("SELECT pg_sleep(0.002)");
                            }
                        } else {
                            LockSupport.parkNanos(HANDLER.toNanos());
                        }
                        handled.incrementAndGet();
                        return Ack.ok();
                    }));
        }
        while (handled.get() < events) {
            Thread.sleep(20);
        }
        double rate = events / ((System.nanoTime() - start) / 1e9);
        running.forEach(r -> r.stop(Duration.ofSeconds(5)));
        stores.forEach(EventStore::close);
        pools.forEach(HikariDataSource::close);
        return rate;
    }

    private static void failover(BenchReport out, BenchDatabase db, EventStore store, HikariDataSource pool, int kills)
            throws Exception {
        Duration ttl = Duration.ofSeconds(4);
        Duration renew = Duration.ofSeconds(1);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE handled (bucket int NOT NULL, pid bigint NOT NULL, at timestamptz NOT NULL)");
        }
        AtomicBoolean writing = new AtomicBoolean(true);
        Thread writer = Thread.ofPlatform().start(() -> {
            for (long i = 0; writing.get(); i++) {
                store.append("flow-" + (i % 400), ExpectedVersion.any(), EventData.json("Work", "{}"));
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            }
        });
        List<Double> seconds = new ArrayList<>();
        try {
            for (int k = 0; k < kills; k++) {
                String name = "failover-" + k;
                Process victim = worker(db, name, ttl, renew, "victim-" + k);
                Process survivor = worker(db, name, ttl, renew, "survivor-" + k);
                waitUntil(() -> owners(pool, name) == 2, Duration.ofSeconds(60));
                List<Integer> victimBuckets = buckets(pool, name, victim.pid());
                victim.destroyForcibly();
                victim.waitFor(30, TimeUnit.SECONDS);
                long killedAt = millisNow(pool);
                waitUntil(() -> resumed(pool, victimBuckets, victim.pid(), killedAt) == victimBuckets.size(),
                        Duration.ofSeconds(60));
                long last = lastResume(pool, victimBuckets, victim.pid(), killedAt);
                seconds.add((last - killedAt) / 1000.0);
                survivor.getOutputStream().close();
                survivor.waitFor(30, TimeUnit.SECONDS);
            }
        } finally {
            writing.set(false);
            writer.join();
        }
        Collections.sort(seconds);
        out.printf("| failover after SIGKILL (2 workers, 16 buckets, leaseTtl %d s, renewInterval %d s) | value |%n",
                ttl.toSeconds(), renew.toSeconds());
        out.println("|---|---:|");
        out.printf("| kills | %d |%n", seconds.size());
        out.printf("| median time until every bucket of the killed worker handles events again | %.2f s |%n",
                seconds.get(seconds.size() / 2));
        out.printf("| slowest | %.2f s |%n", seconds.get(seconds.size() - 1));
        out.printf("| bound leaseTtl + 2 * renewInterval | %d s |%n", ttl.plus(renew.multipliedBy(2)).toSeconds());
        out.target("4", "failover after SIGKILL, slowest of " + seconds.size() + " kill(s)",
                seconds.get(seconds.size() - 1),
                BenchResult.Comparison.AT_MOST, ttl.plus(renew.multipliedBy(2)).toMillis() / 1000.0, " s",
                String.format(java.util.Locale.ROOT, "median %.2f s; bound leaseTtl + 2 × renewInterval",
                        seconds.get(seconds.size() / 2)));
    }

    private static Process worker(BenchDatabase db, String name, Duration ttl, Duration renew, String label)
            throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        File log = new File("target/bench-" + label + ".log");
        log.getParentFile().mkdirs();
        return new ProcessBuilder(java, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
                System.getProperty("java.class.path"), ShardWorkerMain.class.getName(), db.url(), name, "flow",
                Integer.toString(SHARDS), Long.toString(ttl.toMillis()), Long.toString(renew.toMillis()), "2000")
                .redirectErrorStream(true).redirectOutput(log).start();
    }

    private interface Check {
        boolean ok() throws Exception;
    }

    private static void waitUntil(Check check, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!check.ok()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("benchmark condition not reached within " + timeout);
            }
            Thread.sleep(20);
        }
    }

    private static long scalar(HikariDataSource pool, String sql) throws Exception {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static long millisNow(HikariDataSource pool) throws Exception {
        return scalar(pool, "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint");
    }

    private static long owners(HikariDataSource pool, String name) throws Exception {
        return scalar(pool, "SELECT count(DISTINCT owner) FROM waymark.shards WHERE subscription = '" + name
                + "' AND lease_expires_at > now() HAVING count(*) = " + SHARDS + " UNION ALL SELECT 0 LIMIT 1");
    }

    private static List<Integer> buckets(HikariDataSource pool, String name, long pid) throws Exception {
        List<Integer> out = new ArrayList<>();
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT DISTINCT bucket FROM handled WHERE pid = " + pid
                        + " AND at > clock_timestamp() - interval '1 second'")) {
            while (rs.next()) {
                out.add(rs.getInt(1));
            }
        }
        return out;
    }

    private static String resumedSql(String select, List<Integer> buckets, long pid, long killedAt) {
        return "SELECT " + select + " FROM (SELECT bucket, min(at) AS first FROM handled WHERE pid <> " + pid
                + " AND at > to_timestamp(" + killedAt + " / 1000.0) AND bucket IN ("
                + String.join(",", buckets.stream().map(String::valueOf).toList()) + ") GROUP BY bucket) t";
    }

    private static long resumed(HikariDataSource pool, List<Integer> buckets, long pid, long killedAt)
            throws Exception {
        return scalar(pool, resumedSql("count(*)", buckets, pid, killedAt));
    }

    private static long lastResume(HikariDataSource pool, List<Integer> buckets, long pid, long killedAt)
            throws Exception {
        return scalar(pool, resumedSql("(extract(epoch FROM max(first)) * 1000)::bigint", buckets, pid, killedAt));
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }
}
