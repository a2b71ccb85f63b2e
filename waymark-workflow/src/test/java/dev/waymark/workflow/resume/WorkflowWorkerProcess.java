package dev.waymark.workflow.resume;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.WorkflowContext;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * A workflow worker in its own JVM (engine + resume worker), for {@link WorkflowProcessTest}. Every
 * step action records itself in {@code effects(workflow, step, pid)}; awakeable ids are published to
 * {@code published(workflow, awakeable)} for the test to complete from its own JVM. In mode
 * {@code hang} the step {@code b} of workflow {@code slow} never returns, so the process can be
 * killed mid-step. Arguments: JDBC URL, lease TTL ms, poll ms, mode. Runs until stdin closes or it is killed.
 */
public final class WorkflowWorkerProcess {

    private WorkflowWorkerProcess() {}

    /** Runs the worker. */
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setMaximumPoolSize(12);
        Duration ttl = Duration.ofMillis(Long.parseLong(args[1]));
        Duration poll = Duration.ofMillis(Long.parseLong(args[2]));
        boolean hang = "hang".equals(args[3]);
        long pid = ProcessHandle.current().pid();
        try (HikariDataSource ds = new HikariDataSource(config);
                EventStore store = EventStore.builder(ds).build()) {
            WorkflowRegistry registry = new WorkflowRegistry()
                    .register("order", Integer.class, String.class, (ctx, n) -> {
                        record(ds, ctx, "reserve", pid);
                        ctx.sleep("cool", Duration.ofMillis(100 + (n % 5) * 50));
                        Awakeable<String> approval = ctx.awakeable("approval", String.class);
                        ctx.step("publish", () -> {
                            publish(ds, ctx.workflowId(), approval);
                            return null;
                        });
                        String who = approval.await();
                        String shipped = ctx.child("ship", "shipping", ctx.workflowId() + ".ship", n, String.class)
                                .await();
                        record(ds, ctx, "close", pid);
                        return who + "/" + shipped;
                    })
                    .register("shipping", Integer.class, String.class, (ctx, n) -> {
                        record(ds, ctx, "pack", pid);
                        record(ds, ctx, "label", pid);
                        return "parcel-" + n;
                    })
                    .register("sleeper", Long.class, String.class, (ctx, millis) -> {
                        record(ds, ctx, "before", pid);
                        ctx.sleep("nap", Duration.ofMillis(millis));
                        record(ds, ctx, "after", pid);
                        return "woke in " + pid;
                    })
                    .register("slow", String.class, String.class, (ctx, in) -> {
                        record(ds, ctx, "a", pid);
                        ctx.step("b", Integer.class, () -> {
                            while (hang) {
                                LockSupport.park(); // killed here
                            }
                            effect(ds, ctx.workflowId(), "b", pid);
                            return 2;
                        });
                        return "done by " + pid;
                    });
            try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).leaseTtl(ttl).build();
                    ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().leaseTtl(ttl)
                            .pollInterval(poll).concurrency(8)
                            .retry(RetryPolicy.exponential(ResumeOptions.DEFAULT_RETRY.maxAttempts(),
                                    Duration.ofMillis(50), Duration.ofMillis(200)))
                            .build()).start()) {
                System.out.println("worker pid " + pid + " owner " + worker.owner());
                System.out.flush();
                while (System.in.read() >= 0) {
                    // run until the test closes stdin
                }
            }
        }
    }

    private static void record(DataSource ds, WorkflowContext ctx, String step, long pid) throws SQLException {
        ctx.step(step, Integer.class, () -> {
            effect(ds, ctx.workflowId(), step, pid);
            return 1;
        });
    }

    private static void effect(DataSource ds, String workflow, String step, long pid) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement p = c
                        .prepareStatement("INSERT INTO effects (workflow, step, pid) VALUES (?, ?, ?)")) {
            p.setString(1, workflow);
            p.setString(2, step);
            p.setLong(3, pid);
            p.executeUpdate();
        }
    }

    private static void publish(DataSource ds, String workflow, Awakeable<String> a) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement p = c.prepareStatement(
                        "INSERT INTO published (workflow, awakeable) VALUES (?, ?) ON CONFLICT DO NOTHING")) {
            p.setString(1, workflow);
            p.setObject(2, a.id());
            p.executeUpdate();
        }
    }
}
