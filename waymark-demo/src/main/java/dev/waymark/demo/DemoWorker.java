package dev.waymark.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.resume.ResumeListener;
import dev.waymark.workflow.resume.ResumeOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;

/**
 * One demo worker in its own JVM: a member of the sharded pool over the {@code order} category
 * (each placed order starts its fulfilment workflow), a workflow engine that runs what it starts,
 * and a resume worker that picks up whatever another worker left behind. Runs until stdin closes or
 * it is killed. Arguments: JDBC URL, schema, worker label, Kafka bootstrap servers, payments topic.
 */
public final class DemoWorker {

    /** Lease TTL of buckets and workflow instances: short, so a killed worker is replaced quickly. */
    public static final Duration TTL = Duration.ofSeconds(3);

    private DemoWorker() {}

    /** Runs the worker. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String schema = args[1];
        String label = args[2];
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(6);
        config.setPoolName("demo-" + label);
        ObjectMapper json = new ObjectMapper();
        try (HikariDataSource ds = new HikariDataSource(config);
                EventStore store = EventStore.builder(ds).schema(schema).build();
                DemoPayments payments = DemoPayments.producer(args[3], args[4])) {
            WorkflowEngine engine = WorkflowEngine.builder(store, DemoWorkflows.registry(ds, schema, label, payments))
                    .leaseTtl(TTL).retry(RetryPolicy.exponential(WorkflowEngine.DEFAULT_RETRY.maxAttempts(),
                            Duration.ofMillis(200), Duration.ofSeconds(2)))
                    .build();
            engine.resumeWorker(ResumeOptions.builder().leaseTtl(TTL).pollInterval(Duration.ofMillis(500))
                    .retry(RetryPolicy.exponential(ResumeOptions.DEFAULT_RETRY.maxAttempts(), Duration.ofMillis(200),
                            Duration.ofSeconds(2)))
                    .listener(new ResumeListener() {}).build())
                    .start();
            ShardedSubscription pool = ShardedSubscription.builder(store, "fulfilment", Target.category("order"))
                    .shards(6).leaseTtl(TTL).renewInterval(Duration.ofMillis(1000))
                    .retry(RetryPolicy.fixed(5, Duration.ofMillis(200)))
                    .start(d -> {
                        JsonNode order = json.readTree(d.event().data());
                        try (Connection c = ds.getConnection();
                                PreparedStatement p = c.prepareStatement(
                                        "INSERT INTO \"" + schema + "\".demo_handled (event_id, stream, bucket, worker)"
                                                + " VALUES (?, ?, ?, ?)")) {
                            p.setObject(1, d.event().eventId());
                            p.setString(2, d.event().streamName());
                            p.setInt(3, d.bucket());
                            p.setString(4, label);
                            p.executeUpdate();
                        }
                        engine.start("fulfilment", order.get("order").asText(),
                                new DemoWorkflows.Order(order.get("order").asText(), order.get("total").asInt()),
                                String.class);
                        return Ack.ok();
                    });
            System.out
                    .println("ready " + label + " pid " + ProcessHandle.current().pid() + " worker " + pool.workerId());
            System.out.flush();
            while (System.in.read() >= 0) {
                // run until the demo closes stdin (or kills this JVM)
            }
            pool.stop(Duration.ofSeconds(5));
            engine.close();
        }
    }
}
