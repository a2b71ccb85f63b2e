package dev.waymark.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventStore;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A sharded worker in its own JVM, started (and killed) by {@link ShardBenchmark}. It records the
 * bucket and time of every handled event in {@code handled}. Arguments: JDBC URL, subscription,
 * category, shards, lease TTL ms, renew ms, handler delay µs.
 */
public final class ShardWorkerMain {

    private ShardWorkerMain() {}

    /** Runs the worker until its standard input closes or it is killed. */
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setMaximumPoolSize(8);
        long delay = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(args[6]));
        long pid = ProcessHandle.current().pid();
        try (HikariDataSource dataSource = new HikariDataSource(config);
                EventStore store = EventStore.builder(dataSource).build()) {
            ShardedSubscription worker = ShardedSubscription.builder(store, args[1], Target.category(args[2]))
                    .shards(Integer.parseInt(args[3]))
                    .leaseTtl(Duration.ofMillis(Long.parseLong(args[4])))
                    .renewInterval(Duration.ofMillis(Long.parseLong(args[5])))
                    .start(d -> {
                        LockSupport.parkNanos(delay);
                        try (Connection c = dataSource.getConnection();
                                PreparedStatement p = c.prepareStatement(
                                        "INSERT INTO handled (bucket, pid, at) VALUES (?, ?, clock_timestamp())")) {
                            p.setInt(1, d.bucket());
                            p.setLong(2, pid);
                            p.executeUpdate();
                        }
                        return Ack.ok();
                    });
            System.out.println("worker " + worker.workerId() + " pid " + pid);
            System.out.flush();
            while (System.in.read() >= 0) {
                // runs until stdin closes
            }
            worker.stop(Duration.ofSeconds(10));
        }
    }
}
