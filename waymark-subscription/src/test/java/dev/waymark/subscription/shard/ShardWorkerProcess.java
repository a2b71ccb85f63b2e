package dev.waymark.subscription.shard;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.DeadLetterReason;
import dev.waymark.store.EventStore;
import dev.waymark.store.RetryPolicy;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One worker of a sharded pool in its own JVM, for {@link ShardedPoolProcessTest} and the benchmark.
 * It records each handled event in {@code handled}, dead-letters events of type {@code Poison},
 * prints its worker id, and runs until its standard input closes or it is killed.
 * Arguments: JDBC URL, subscription, category, shards, lease TTL ms, renew ms, handler delay µs.
 */
public final class ShardWorkerProcess {

    private ShardWorkerProcess() {}

    /** Runs the worker. */
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setMaximumPoolSize(8);
        long delayNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(args[6]));
        long pid = ProcessHandle.current().pid();
        try (HikariDataSource dataSource = new HikariDataSource(config);
                EventStore store = EventStore.builder(dataSource).build()) {
            ShardedSubscription worker = ShardedSubscription.builder(store, args[1], Target.category(args[2]))
                    .shards(Integer.parseInt(args[3]))
                    .leaseTtl(Duration.ofMillis(Long.parseLong(args[4])))
                    .renewInterval(Duration.ofMillis(Long.parseLong(args[5])))
                    .retry(RetryPolicy.fixed(3, Duration.ZERO))
                    .start(d -> {
                        if (d.event().type().equals("Poison")) {
                            return Ack.deadLetter(DeadLetterReason.poison("poison event"));
                        }
                        LockSupport.parkNanos(delayNanos); // stands in for the handler's real work
                        try (Connection c = dataSource.getConnection();
                                PreparedStatement p = c.prepareStatement("INSERT INTO handled (event_id, stream,"
                                        + " version, bucket, epoch, pid, at) VALUES (?, ?, ?, ?, ?, ?, clock_timestamp())")) {
                            p.setObject(1, d.event().eventId());
                            p.setString(2, d.event().streamName());
                            p.setLong(3, d.event().streamVersion());
                            p.setInt(4, d.bucket());
                            p.setLong(5, d.epoch());
                            p.setLong(6, pid);
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
