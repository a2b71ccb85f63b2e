package dev.waymark.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.core.DeadLetterReason;
import dev.waymark.core.RetryPolicy;
import dev.waymark.kafka.DeadLetterPolicy;
import dev.waymark.kafka.KafkaCoordinates;
import dev.waymark.kafka.KafkaSource;
import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.store.EventStore;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.workflow.WorkflowContext;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import javax.sql.DataSource;

/**
 * One chaos worker in its own JVM: a member of the sharded pool over the {@code chaos} category, a
 * workflow engine with a resume worker running {@code chaos_flow} (steps, a durable sleep, a child),
 * and a Kafka processor ({@code orderedByKey}) over the chaos topic. Every handled event, step action
 * and Kafka record is recorded in a table; records whose value contains {@code "poison":true} are
 * dead-lettered. A processor that fails (for example when a broker outage outlives its retries) is
 * logged with {@code PROCESSOR_FAILED} and started again, as a supervisor in a real service would.
 * Its store bounds Waymark's own transactions at {@link #TX_BOUND}; a line {@code arm <file>} on
 * standard input makes it hold its next lease transaction open until the file exists (see
 * {@link TransactionFreeze}), for the fault {@code FREEZE_IN_TRANSACTION}.
 * Prints {@code ready <label> pid <pid> worker <id>} when running; runs until stdin closes or it is killed.
 * Arguments: JDBC URL, label, Kafka bootstrap servers, topic.
 */
public final class ChaosWorker {

    /** Category of the sharded pool. */
    static final String CATEGORY = "chaos";
    /** Name of the sharded pool's subscription. */
    static final String POOL = "chaos-pool";
    /** Buckets of the pool. */
    static final int SHARDS = 8;
    /** Lease TTL of buckets and workflow instances. */
    static final Duration TTL = Duration.ofMillis(2500);
    /** Renew interval of the pool. */
    static final Duration RENEW = Duration.ofMillis(800);
    /** The bound of the transactions Waymark opens for its own work (below the lease TTL). */
    static final Duration TX_BOUND = Duration.ofMillis(2000);
    /** Consumer group of the Kafka processor. */
    static final String GROUP = "chaos-processor";
    /** The parent workflow. */
    static final String FLOW = "chaos_flow";
    /** The child workflow. */
    static final String CHILD = "chaos_child";

    private ChaosWorker() {}

    /** Runs the worker. */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String label = args[1];
        String bootstrap = args[2];
        String topic = args[3];
        long pid = ProcessHandle.current().pid();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(10);
        config.setConnectionTimeout(5_000);
        config.setPoolName("chaos-" + label);
        TransactionFreeze freeze = new TransactionFreeze();
        try (HikariDataSource ds = new HikariDataSource(config);
                EventStore store = EventStore.builder(freeze.wrap(ds)).internalTransactionTimeout(TX_BOUND).build()) {
            WorkflowRegistry registry = new WorkflowRegistry()
                    .register(FLOW, Integer.class, String.class, (ctx, n) -> {
                        effect(ds, ctx, "reserve", pid);
                        ctx.sleep("cool", Duration.ofMillis(200 + (n % 4) * 150L));
                        String child = ctx.child("ship", CHILD, ctx.workflowId() + ".child", n, String.class).await();
                        effect(ds, ctx, "close", pid);
                        return "flow-" + n + "/" + child;
                    })
                    .register(CHILD, Integer.class, String.class, (ctx, n) -> {
                        effect(ds, ctx, "pack", pid);
                        effect(ds, ctx, "label", pid);
                        return "parcel-" + n;
                    });
            WorkflowEngine engine = WorkflowEngine.builder(store, registry).leaseTtl(TTL)
                    .retry(RetryPolicy.exponential(30, Duration.ofMillis(200), Duration.ofSeconds(2)))
                    .build();
            ResumeWorker resume = engine.resumeWorker(ResumeOptions.builder().leaseTtl(TTL)
                    .pollInterval(Duration.ofMillis(500)).concurrency(4)
                    .retry(RetryPolicy.exponential(30, Duration.ofMillis(200), Duration.ofSeconds(2)))
                    .build()).start();
            ShardedSubscription pool = ShardedSubscription.builder(store, POOL, Target.category(CATEGORY))
                    .shards(SHARDS).leaseTtl(TTL).renewInterval(RENEW)
                    .retry(RetryPolicy.fixed(100, Duration.ofMillis(500)))
                    .start(d -> {
                        try (Connection c = ds.getConnection();
                                PreparedStatement p = c.prepareStatement(
                                        "INSERT INTO handled (event_id, stream, version, bucket, epoch, pid)"
                                                + " VALUES (?, ?, ?, ?, ?, ?)")) {
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
            ProcessingApp app = kafka(bootstrap, topic, ds, pid);
            System.out.println("ready " + label + " pid " + pid + " worker " + pool.workerId());
            System.out.flush();
            Thread stdin = Thread.ofPlatform().daemon().name("chaos-stdin").start(() -> {
                try {
                    java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                            StandardCharsets.UTF_8));
                    for (String line = in.readLine(); line != null; line = in.readLine()) { // runs until stdin closes
                        if (line.startsWith("arm ")) {
                            freeze.arm(java.nio.file.Path.of(line.substring(4)));
                        }
                    }
                } catch (java.io.IOException e) {
                    // closed
                }
            });
            while (stdin.isAlive()) {
                stdin.join(500);
                ProcessorState state = app.snapshot().get("records");
                if (state != null && (state.lifecycle() == ProcessorState.Lifecycle.FAILED
                        || state.lifecycle() == ProcessorState.Lifecycle.STOPPED)) {
                    System.out.println(Instant.now() + " PROCESSOR_FAILED " + state.lifecycle() + ": " + state.failure()
                            + " (message " + state.failedMessageId() + "); starting it again");
                    System.out.flush();
                    app.stop(Duration.ofSeconds(1), Duration.ofSeconds(5));
                    app = kafka(bootstrap, topic, ds, pid);
                }
            }
            app.stop(Duration.ofSeconds(5), Duration.ofSeconds(10));
            pool.stop(Duration.ofSeconds(5));
            resume.close();
            engine.close();
        }
    }

    private static ProcessingApp kafka(String bootstrap, String topic, DataSource ds, long pid) {
        KafkaSource source = KafkaSource.of(KafkaSourceConfig.builder(bootstrap, GROUP)
                .topics(topic)
                .deadLetters(DeadLetterPolicy.topicSuffix(".DLT"))
                .pollTimeout(Duration.ofMillis(200))
                .commitInterval(Duration.ofMillis(200))
                .brokerRetry(KafkaSourceConfig.DEFAULT_BROKER_RETRY.withMaxAttempts(30))
                .brokerOperationTimeout(Duration.ofSeconds(5))
                .drainTimeout(Duration.ofSeconds(5))
                .consumerProperty("session.timeout.ms", "6000")
                .consumerProperty("heartbeat.interval.ms", "500")
                .build());
        return ProcessingApp.builder()
                .processor("records", source, Concurrency.orderedByKey(4), msg -> {
                    KafkaCoordinates at = KafkaCoordinates.of(msg.envelope());
                    String value = new String(msg.payload(), StandardCharsets.UTF_8);
                    if (value.contains("\"poison\":true")) {
                        return AckDecision.deadLetter(DeadLetterReason.poison("record marked poison: " + value));
                    }
                    try (Connection c = ds.getConnection();
                            PreparedStatement p = c.prepareStatement(
                                    "INSERT INTO kafka_handled (topic, kpartition, koffset, key, pid) VALUES (?, ?, ?, ?, ?)")) {
                        p.setString(1, at.topic());
                        p.setInt(2, at.partition());
                        p.setLong(3, at.offset());
                        p.setString(4, msg.key().asUtf8()); // LoadDriver sends text keys "k-<n>"
                        p.setLong(5, pid);
                        p.executeUpdate();
                    }
                    return AckDecision.ok();
                })
                .retry(RetryPolicy.fixed(RetryPolicy.UNLIMITED, Duration.ofMillis(300)))
                .build()
                .start();
    }

    private static void effect(DataSource ds, WorkflowContext ctx, String step, long pid) throws SQLException {
        ctx.step(step, Integer.class, () -> {
            try (Connection c = ds.getConnection();
                    PreparedStatement p = c.prepareStatement(
                            "INSERT INTO wf_effects (workflow, step, pid) VALUES (?, ?, ?)")) {
                p.setString(1, ctx.workflowName() + "/" + ctx.workflowId());
                p.setString(2, step);
                p.setLong(3, pid);
                p.executeUpdate();
            }
            return 1;
        });
    }
}
