package dev.waymark.demo;

import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.WorkflowContext;
import dev.waymark.workflow.WorkflowRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The demo's workflows: an order fulfilment (reserve, charge, a durable cool-off sleep, an approval
 * awakeable that another component completes, a child shipping workflow, a notification) and the
 * shipping child. Every step records itself in {@code demo_steps} so the demo can check that no
 * step ran twice without a crash.
 */
public final class DemoWorkflows {

    /** An order as the workflows see it. */
    public record Order(String id, int totalCents) {}

    /** What the charge step hands on. */
    public interface Payments {
        /** Publishes a payment request for {@code order} (idempotent per order). */
        void requestPayment(Order order) throws Exception;
    }

    private DemoWorkflows() {}

    /** The registry, recording steps through {@code dataSource} and charging through {@code payments}. */
    public static WorkflowRegistry registry(DataSource dataSource, String schema, String worker, Payments payments) {
        return new WorkflowRegistry()
                .register("fulfilment", Order.class, String.class, (ctx, order) -> {
                    step(ctx, dataSource, schema, worker, "reserve");
                    ctx.step("charge", () -> {
                        payments.requestPayment(order);
                        mark(dataSource, schema, worker, ctx.workflowId(), "charge");
                        return null;
                    });
                    ctx.sleep("cool-off", Duration.ofMillis(300));
                    Awakeable<String> approval = ctx.awakeable("approval", String.class);
                    ctx.step("ask-approval", () -> {
                        try (Connection c = dataSource.getConnection();
                                PreparedStatement p = c.prepareStatement(
                                        "INSERT INTO \"" + schema
                                                + "\".demo_approvals (workflow, awakeable) VALUES (?, ?)"
                                                + " ON CONFLICT DO NOTHING")) {
                            p.setString(1, ctx.workflowId());
                            p.setObject(2, approval.id());
                            p.executeUpdate();
                        }
                        return null;
                    });
                    String approver = approval.await();
                    String parcel = ctx.child("ship", "shipping", ctx.workflowId() + ".ship", order, String.class)
                            .await();
                    step(ctx, dataSource, schema, worker, "notify");
                    return order.id() + " approved by " + approver + ", " + parcel;
                })
                .register("shipping", Order.class, String.class, (ctx, order) -> {
                    step(ctx, dataSource, schema, worker, "pack");
                    step(ctx, dataSource, schema, worker, "label");
                    return "parcel-" + order.id();
                });
    }

    private static void step(WorkflowContext ctx, DataSource ds, String schema, String worker, String name)
            throws SQLException {
        ctx.step(name, () -> {
            mark(ds, schema, worker, ctx.workflowId(), name);
            return null;
        });
    }

    private static void mark(DataSource ds, String schema, String worker, String workflow, String step)
            throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement p = c.prepareStatement(
                        "INSERT INTO \"" + schema + "\".demo_steps (workflow, step, worker) VALUES (?, ?, ?)")) {
            p.setString(1, workflow);
            p.setString(2, step);
            p.setString(3, worker);
            p.executeUpdate();
        }
    }
}
