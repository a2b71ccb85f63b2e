package dev.waymark.demo;

import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.WorkflowClient;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * "Another component": an approval desk that sees the approval requests the workflows publish and
 * completes their awakeables through a {@link WorkflowClient}, which runs no workflows itself.
 */
final class Approver implements AutoCloseable {

    private final DataSource dataSource;
    private final String schema;
    private final WorkflowClient client;
    private final AtomicInteger approved = new AtomicInteger();
    private volatile boolean running = true;
    private final Thread thread;

    Approver(DataSource dataSource, String schema, WorkflowClient client) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.client = client;
        this.thread = Thread.ofPlatform().daemon().name("demo-approver").start(this::loop);
    }

    int approved() {
        return approved.get();
    }

    private void loop() {
        while (running) {
            try {
                List<UUID> pending = new ArrayList<>();
                try (Connection c = dataSource.getConnection();
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT awakeable FROM \"" + schema
                                + "\".demo_approvals WHERE NOT approved")) {
                    while (rs.next()) {
                        pending.add(rs.getObject(1, UUID.class));
                    }
                }
                for (UUID id : pending) {
                    if (client.completeAwakeable(id, "approval-desk") == AwakeableOutcome.SETTLED) {
                        approved.incrementAndGet();
                    }
                    try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                        s.executeUpdate(
                                "UPDATE \"" + schema + "\".demo_approvals SET approved = true WHERE awakeable = '"
                                        + id + "'");
                    }
                }
                Thread.sleep(100); // the desk checks its inbox ten times a second
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                System.out.println("      [approver] " + e.getMessage() + "; trying again");
            }
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
