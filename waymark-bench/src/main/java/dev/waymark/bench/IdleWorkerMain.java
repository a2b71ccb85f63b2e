package dev.waymark.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The process {@link IdleBenchmark} measures, in its own JVM so that its CPU time is its own and it
 * can run on the build before the change. It uses only API that the build before had.
 *
 * <p>{@code idle URL PREFIX POOLS SHARDS}: one store handle, POOLS sharded pools of SHARDS buckets
 * over an empty category, default settings; prints {@code READY} once every pool holds all its
 * buckets, then idles until its standard input closes; on each line {@code COUNT} it reads, prints
 * {@code COUNT checkouts statements purpose=n...}: the connections taken from its pool and the
 * statements the store handle sent so far, in all and by purpose (-1 on a build without the query
 * counter).
 *
 * <p>{@code latency URL PREFIX RATE SECONDS}: one pool of 16 buckets on one store handle, a writer
 * on another; appends RATE events a second, paced, for SECONDS; prints
 * {@code LATENCY p50_us p99_us max_us handled appended}, the time from just before each append to
 * its handler call.
 */
public final class IdleWorkerMain {

    private IdleWorkerMain() {}

    /** Runs one mode; see the class comment. */
    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "idle" -> idle(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            case "latency" -> latency(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            default -> throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    private static CountingPool pool(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        return new CountingPool(config);
    }

    /**
     * A HikariCP pool that counts its checkouts: HikariCP validates a connection idle for more than
     * half a second before handing it out (pgjdbc's {@code isValid}, an empty statement, which the
     * server counts as a transaction), so an idle process's checkouts are transactions too.
     */
    private static final class CountingPool extends HikariDataSource {
        private final AtomicLong checkouts = new AtomicLong();

        CountingPool(HikariConfig config) {
            super(config);
        }

        @Override
        public Connection getConnection() throws SQLException {
            checkouts.incrementAndGet();
            return super.getConnection();
        }
    }

    /**
     * The statements the store handle sent (the sum of {@code EventStore.queryCount} over every
     * purpose), or -1 on a build without that counter: looked up by reflection, since the child
     * runs on the build before the change too.
     */
    private static String statements(EventStore store) {
        try {
            Class<?> purpose = Class.forName("dev.waymark.store.QueryPurpose");
            Method count = EventStore.class.getMethod("queryCount", purpose);
            long total = 0;
            StringBuilder byPurpose = new StringBuilder();
            for (Object p : purpose.getEnumConstants()) {
                long n = (Long) count.invoke(store, p);
                total += n;
                byPurpose.append(' ').append(p.toString().toLowerCase(java.util.Locale.ROOT)).append('=').append(n);
            }
            return total + byPurpose.toString();
        } catch (ReflectiveOperationException e) {
            return "-1";
        }
    }

    private static void idle(String url, String prefix, int pools, int shards) throws Exception {
        try (CountingPool dataSource = pool(url, 8); EventStore store = EventStore.builder(dataSource).build()) {
            List<ShardedSubscription> running = new ArrayList<>();
            for (int p = 0; p < pools; p++) {
                running.add(ShardedSubscription.builder(store, prefix + "-" + p, Target.category(prefix)).shards(shards)
                        .start(d -> Ack.ok()));
            }
            awaitOwned(running, shards);
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null;) { // idles until its standard input closes
                if (line.equals("COUNT")) {
                    System.out.println("COUNT " + dataSource.checkouts.get() + " " + statements(store));
                    System.out.flush();
                }
            }
            running.forEach(s -> s.stop(Duration.ofSeconds(5)));
        }
    }

    private static void latency(String url, String prefix, int rate, int seconds) throws Exception {
        ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
        try (CountingPool readerPool = pool(url, 8);
                CountingPool writerPool = pool(url, 2);
                EventStore reader = EventStore.builder(readerPool).build();
                EventStore writer = EventStore.builder(writerPool).build()) {
            String category = prefix.replace("-", "");
            ShardedSubscription pool = ShardedSubscription.builder(reader, prefix, Target.category(category)).shards(16)
                    .start(d -> {
                        long sent = Long.parseLong(d.event().data().replaceAll("[^0-9]", ""));
                        latencies.add(System.nanoTime() - sent);
                        return Ack.ok();
                    });
            awaitOwned(List.of(pool), 16);
            int total = rate * seconds;
            long interval = 1_000_000_000L / rate;
            long next = System.nanoTime();
            for (int i = 0; i < total; i++) {
                LockSupport.parkNanos(next - System.nanoTime());
                next += interval;
                writer.append(category + "-" + (i % 64), ExpectedVersion.any(),
                        EventData.json("Paced", "{\"t\":" + System.nanoTime() + "}"));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (latencies.size() < total && System.nanoTime() < deadline) {
                LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            }
            long[] sorted = latencies.stream().mapToLong(Long::longValue).toArray();
            Arrays.sort(sorted);
            System.out.printf("LATENCY %d %d %d %d %d%n", percentile(sorted, 0.50) / 1000,
                    percentile(sorted, 0.99) / 1000,
                    sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1000, sorted.length, total);
            System.out.flush();
            pool.stop(Duration.ofSeconds(5));
        }
    }

    private static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    private static void awaitOwned(List<ShardedSubscription> pools, int shards) {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!pools.stream().allMatch(s -> s.ownedBuckets().size() == shards)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the pools did not claim all their buckets within 2 minutes");
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }
}
