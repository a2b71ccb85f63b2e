package dev.waymark.subscription;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.store.EventStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A subscriber run in its own JVM by {@link SubscriberKillTest}: it records every handled event in
 * the table {@code handled} and runs until its standard input closes or it is killed.
 * Arguments: JDBC URL, subscription name, category, handler delay in microseconds.
 */
public final class SubscriberProcess {

    private SubscriberProcess() {}

    /** Runs the subscriber. */
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setMaximumPoolSize(4);
        long delayMicros = Long.parseLong(args[3]);
        try (HikariDataSource dataSource = new HikariDataSource(config);
                EventStore store = EventStore.builder(dataSource).build();
                Subscription subscription = Subscription.builder(store, args[1], Target.category(args[2]))
                        .batchSize(100)
                        .checkpointEvery(50, Duration.ofMillis(200))
                        .start(delivery -> {
                            // stands in for real work, so that a kill lands in the middle of the run
                            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(delayMicros));
                            try (Connection c = dataSource.getConnection();
                                    PreparedStatement p = c.prepareStatement(
                                            "INSERT INTO handled (event_id, pid) VALUES (?, ?)")) {
                                p.setObject(1, delivery.event().eventId());
                                p.setLong(2, ProcessHandle.current().pid());
                                p.executeUpdate();
                            }
                            return Ack.ok();
                        })) {
            System.out.println("subscriber " + ProcessHandle.current().pid() + " running");
            System.out.flush();
            while (System.in.read() >= 0) {
                // runs until stdin closes
            }
            subscription.stop(Duration.ofSeconds(10));
        }
    }
}
