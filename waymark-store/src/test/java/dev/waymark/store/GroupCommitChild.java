package dev.waymark.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The appending process of {@link GroupCommitCrashTest}, run in its own JVM until it is killed:
 * {@code writers} threads append two-event appends (both events carry the append's id) to a few
 * streams, with group commit on. Its connections ask the server to check every 50 ms whether the
 * client is still there, so a statement of a killed client is cancelled rather than finished.
 * Arguments: JDBC URL, writers.
 */
public final class GroupCommitChild {

    private static final int STREAMS = 4;

    private GroupCommitChild() {}

    /** Appends until killed. */
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setMaximumPoolSize(4);
        config.addDataSourceProperty("options", "-c client_connection_check_interval=50");
        int writers = Integer.parseInt(args[1]);
        HikariDataSource dataSource = new HikariDataSource(config);
        EventStore store = EventStore.builder(dataSource).build();
        for (int w = 0; w < writers; w++) {
            Thread.ofPlatform().name("writer-" + w).start(() -> {
                while (true) {
                    String append = UUID.randomUUID().toString();
                    String data = "{\"append\":\"" + append + "\"}";
                    store.append("crash-" + ThreadLocalRandom.current().nextInt(STREAMS), ExpectedVersion.any(),
                            List.of(EventData.json("First", data), EventData.json("Second", data)));
                }
            });
        }
        System.out.println("appending with " + writers + " writers");
        System.out.flush();
    }
}
