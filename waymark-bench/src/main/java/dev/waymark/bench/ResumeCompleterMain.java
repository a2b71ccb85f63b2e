package dev.waymark.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dbos.transact.DBOSClient;
import dev.waymark.store.EventStore;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.WorkflowClient;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;

/**
 * The other process of {@link WorkflowResumeBenchmark}: it completes what the workflows wait for,
 * without running any workflow. It takes the rows the workflows publish in {@code bench_waits}
 * (system, id) and completes each: a Waymark awakeable through a client-only {@link WorkflowClient},
 * a DBOS workflow's {@code recv} through {@link DBOSClient#send}. Polls every 2 ms when idle.
 * Arguments: JDBC URL of the bench database (Waymark's schema and {@code bench_waits}), JDBC URL of
 * DBOS's database. Runs until its standard input closes.
 */
public final class ResumeCompleterMain {

    static final String TOPIC = "approval";

    private ResumeCompleterMain() {}

    /** Runs the completer. */
    public static void main(String[] args) throws Exception {
        try (HikariDataSource bench = pool(args[0], 12);
                HikariDataSource dbosPool = pool(args[1], 12);
                EventStore store = EventStore.builder(bench).build();
                ExecutorService completions = Executors.newFixedThreadPool(8)) {
            WorkflowClient client = WorkflowClient.create(store);
            DBOSClient dbos = new DBOSClient(dbosPool);
            System.out.println("ready");
            System.out.flush();
            Thread stdin = Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // until stdin closes
                    }
                } catch (java.io.IOException e) {
                    // closed
                }
            });
            while (stdin.isAlive()) {
                List<String[]> taken = take(bench);
                if (taken.isEmpty()) {
                    LockSupport.parkNanos(2_000_000);
                    continue;
                }
                List<Future<?>> done = new ArrayList<>();
                for (String[] row : taken) {
                    done.add(completions.submit(() -> {
                        if (row[0].equals("waymark")) {
                            AwakeableOutcome o = client.completeAwakeable(UUID.fromString(row[1]), "ok");
                            if (o != AwakeableOutcome.SETTLED) {
                                System.out.println("awakeable " + row[1] + ": " + o);
                            }
                        } else {
                            dbos.send(row[1], "ok", TOPIC, null);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get();
                }
            }
        }
    }

    private static List<String[]> take(HikariDataSource ds) throws Exception {
        List<String[]> out = new ArrayList<>();
        try (Connection c = ds.getConnection();
                PreparedStatement p = c.prepareStatement(
                        "DELETE FROM bench_waits WHERE ctid IN (SELECT ctid FROM bench_waits LIMIT 500 FOR UPDATE SKIP LOCKED)"
                                + " RETURNING system, id");
                ResultSet rs = p.executeQuery()) {
            while (rs.next()) {
                out.add(new String[]{rs.getString(1), rs.getString(2)});
            }
        }
        return out;
    }

    private static HikariDataSource pool(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        return new HikariDataSource(config);
    }
}
