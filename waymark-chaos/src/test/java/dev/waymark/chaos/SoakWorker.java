package dev.waymark.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.WorkflowContext;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * One process of the workflow soak ({@link WorkflowSoakTest}) in its own JVM: a member of a sharded
 * pool over the {@code soak} category whose handler starts one workflow per event, a workflow engine
 * with a resume worker (the defaults but a short lease), and a completer that completes awakeables
 * published by other processes. Each workflow: a step, a 100 ms durable sleep, an awakeable (its id
 * published in {@code soak_awakeables} by a step, completed by another process), two steps.
 * Prints {@code ready <label>} when running, then {@code stats threads <n>} every second; runs until
 * stdin closes or it is killed. Arguments: JDBC URL, label.
 */
public final class SoakWorker {

    static final String CATEGORY = "soak";
    static final String POOL = "soak-pool";
    static final String FLOW = "soak_flow";
    static final Duration TTL = Duration.ofMillis(2500);

    private SoakWorker() {}

    /** Runs the worker. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String label = args[1];
        long pid = ProcessHandle.current().pid();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(10);
        config.setConnectionTimeout(10_000);
        config.setPoolName("soak-" + label);
        config.addDataSourceProperty("ApplicationName", "soak-" + label);
        try (HikariDataSource ds = new HikariDataSource(config); EventStore store = EventStore.builder(ds).build()) {
            WorkflowRegistry registry = new WorkflowRegistry().register(FLOW, String.class, String.class, (ctx, in) -> {
                effect(ds, ctx, "first");
                ctx.sleep("nap", Duration.ofMillis(100));
                Awakeable<String> approval = ctx.awakeable("approval", String.class);
                ctx.step("publish", Integer.class, () -> {
                    try (Connection c = ds.getConnection();
                            PreparedStatement p = c.prepareStatement(
                                    "INSERT INTO soak_awakeables (awakeable_id, workflow, pid) VALUES (?, ?, ?)"
                                            + " ON CONFLICT DO NOTHING")) {
                        p.setObject(1, approval.id());
                        p.setString(2, ctx.workflowId());
                        p.setLong(3, pid);
                        p.executeUpdate();
                    }
                    return 1;
                });
                String by = approval.await();
                effect(ds, ctx, "second");
                effect(ds, ctx, "third");
                return in + " approved by " + by;
            });
            WorkflowEngine engine = WorkflowEngine.builder(store, registry).leaseTtl(TTL)
                    .retry(RetryPolicy.exponential(30, Duration.ofMillis(200), Duration.ofSeconds(2)))
                    .build();
            ResumeWorker resume = engine.resumeWorker(ResumeOptions.builder().leaseTtl(TTL)
                    .retry(RetryPolicy.exponential(30, Duration.ofMillis(200), Duration.ofSeconds(2)))
                    .build()).start();
            ShardedSubscription pool = ShardedSubscription.builder(store, POOL, Target.category(CATEGORY))
                    .shards(8).leaseTtl(TTL).renewInterval(Duration.ofMillis(800))
                    .retry(RetryPolicy.fixed(1000, Duration.ofMillis(300)))
                    .start(d -> {
                        engine.start(FLOW, d.event().eventId().toString(), d.event().streamName(), String.class);
                        try (Connection c = ds.getConnection();
                                PreparedStatement p = c.prepareStatement(
                                        "INSERT INTO soak_handled (event_id, pid) VALUES (?, ?) ON CONFLICT DO NOTHING")) {
                            p.setObject(1, d.event().eventId());
                            p.setLong(2, pid);
                            p.executeUpdate();
                        }
                        return Ack.ok();
                    });
            System.out.println("ready " + label + " pid " + pid);
            System.out.flush();
            Thread stdin = Thread.ofPlatform().daemon().name("soak-stdin").start(() -> {
                try {
                    while (System.in.read() >= 0) {
                        // runs until stdin closes
                    }
                } catch (java.io.IOException e) {
                    // closed
                }
            });
            long lastStats = 0;
            while (stdin.isAlive()) {
                complete(ds, engine, pid, label);
                if (System.nanoTime() - lastStats > 1_000_000_000L) {
                    lastStats = System.nanoTime();
                    System.out.println("stats threads " + ManagementFactory.getThreadMXBean().getThreadCount());
                    System.out.flush();
                }
            }
            pool.stop(Duration.ofSeconds(5));
            resume.close();
            engine.close();
        }
    }

    /**
     * Completes up to 100 awakeables published by other processes: takes them (a 3 s claim, so that
     * a killed completer's rows are taken again), completes each, marks them done; waits 20 ms when
     * there were none.
     */
    private static void complete(DataSource ds, WorkflowEngine engine, long pid, String label) throws Exception {
        List<UUID> taken = new ArrayList<>();
        try (Connection c = ds.getConnection();
                PreparedStatement p = c.prepareStatement(
                        "UPDATE soak_awakeables SET taken_at = now() WHERE awakeable_id IN (SELECT awakeable_id FROM"
                                + " soak_awakeables WHERE done_at IS NULL AND pid <> ? AND (taken_at IS NULL"
                                + " OR taken_at < now() - interval '3 seconds') LIMIT 100 FOR UPDATE SKIP LOCKED)"
                                + " RETURNING awakeable_id")) {
            p.setLong(1, pid);
            try (ResultSet rs = p.executeQuery()) {
                while (rs.next()) {
                    taken.add(rs.getObject(1, UUID.class));
                }
            }
        } catch (SQLException e) {
            System.out.println("completer: " + e);
        }
        if (taken.isEmpty()) {
            java.util.concurrent.locks.LockSupport.parkNanos(20_000_000);
            return;
        }
        for (UUID id : taken) {
            engine.completeAwakeable(id, label);
        }
        try (Connection c = ds.getConnection();
                PreparedStatement p = c.prepareStatement(
                        "UPDATE soak_awakeables SET done_at = now(), done_by = ? WHERE awakeable_id = ANY (?)")) {
            p.setLong(1, pid);
            p.setArray(2, c.createArrayOf("uuid", taken.toArray()));
            p.executeUpdate();
        }
    }

    private static void effect(DataSource ds, WorkflowContext ctx, String step) throws SQLException {
        ctx.step(step, Integer.class, () -> {
            try (Connection c = ds.getConnection();
                    PreparedStatement p = c.prepareStatement(
                            "INSERT INTO soak_effects (workflow, step) VALUES (?, ?)")) {
                p.setString(1, ctx.workflowId());
                p.setString(2, step);
                p.executeUpdate();
            }
            return 1;
        });
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
