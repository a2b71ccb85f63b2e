package dev.waymark.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.core.RetryPolicy;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.InMemorySource;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.store.SubscriptionSource;
import dev.waymark.store.AppendResult;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.resume.ResumeOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The README's snippets, compiled (and run by this module's tests). Copy from here into the README;
 * change them here first.
 */
public final class ReadmeExamples {

    /** An example event payload. */
    public record OrderPlaced(String order, int totalCents) {}

    /** What the examples "billed" or "projected". */
    public final List<String> seen = new CopyOnWriteArrayList<>();

    private void project(RecordedEvent event) {
        seen.add("projected " + event.streamName() + "@" + event.streamVersion());
    }

    private void bill(RecordedEvent event) {
        seen.add("billed " + event.eventId());
    }

    private void bill(byte[] payload) {
        seen.add("billed " + payload.length + " bytes");
    }

    /** The quick start; {@code config} points at a database with an {@code orders(id, shipped)} table. */
    public EventStore quickStart(HikariConfig config) throws Exception {
        HikariDataSource dataSource = new HikariDataSource(config); // autocommit connections
        EventStore store = EventStore.builder(dataSource).schema("waymark").build();
        store.migrations().migrate(); // a deployment step; never implicit

        AppendResult r = store.append("order-42", ExpectedVersion.noStream(),
                List.of(EventData.of("OrderPlaced", new OrderPlaced("42", 1999))));
        store.append("order-42", ExpectedVersion.exactly(r.streamVersion()), EventData.json("OrderPaid", "{}"));

        List<RecordedEvent> history = store.readStreamForward("order-42", 0, 100);
        store.categoryForward("order", GlobalPosition.START, 500).forEach(this::project); // lazy, paged

        // Application SQL and events commit together; appending first, the work runs once (see inTransaction).
        store.inTransaction(tx -> {
            tx.append("order-42", ExpectedVersion.streamExists(), List.of(EventData.json("OrderShipped", "{}")));
            try (var ps = tx.connection().prepareStatement("UPDATE orders SET shipped = true WHERE id = ?")) {
                ps.setString(1, "42");
                ps.executeUpdate();
            }
            return null;
        });
        seen.add("history " + history.size());
        return store;
    }

    /** The subscription example. */
    public Subscription subscription(EventStore store) {
        Subscription billing = Subscription.builder(store, "billing", Target.category("order"))
                .consumerGroup(0, 1) // optional: this process is member 0 of 1
                .retry(RetryPolicy.fixed(5, Duration.ofSeconds(1)))
                .start(delivery -> {
                    bill(delivery.event()); // idempotent: key on delivery.event().eventId()
                    return Ack.ok(); // or Ack.retry(delay), Ack.deadLetter(reason)
                });
        return billing;
    }

    /** The end of the subscription example. */
    public void stop(Subscription billing) {
        billing.stop(Duration.ofSeconds(30)); // lets the handler finish, writes the checkpoint
    }

    /** The sharded pool example. */
    public ShardedSubscription sharded(EventStore store) {
        ShardedSubscription worker = ShardedSubscription.builder(store, "billing-pool", Target.category("order"))
                .shards(16).leaseTtl(Duration.ofSeconds(30)).renewInterval(Duration.ofSeconds(10))
                .start(d -> {
                    bill(d.event());
                    return Ack.ok();
                });
        return worker;
    }

    /** The message-processing example. */
    public ProcessingApp messaging(EventStore store) {
        ProcessingApp app = ProcessingApp.builder()
                .processor("billing", SubscriptionSource.of(Subscription.builder(store, "billing-app",
                        Target.category("order"))),
                        Concurrency.serial(), msg -> {
                            bill(msg.payload());
                            return AckDecision.ok();
                        })
                .processor("emails", new InMemorySource("emails"), Concurrency.orderedByKey(16),
                        msg -> AckDecision.ok())
                .build() // validates everything; nothing starts
                .start();
        return app;
    }

    /** The end of the message-processing example; whether everything drained in time. */
    public boolean stop(ProcessingApp app) {
        return app.stop(); // sources end, in-flight and inboxed messages are finalized, then a forced stop
    }

    /** An example workflow input. */
    public record Order(String id, int totalCents) {}

    /** An example step result. */
    public record Charge(String chargeId) {}

    /** The workflow example: an order fulfilment with a charge, a cool-off, an approval and a child. */
    public WorkflowEngine workflows(EventStore store) {
        WorkflowRegistry workflows = new WorkflowRegistry()
                .register("fulfil", Order.class, String.class, (ctx, order) -> {
                    Charge c = ctx.step("charge", Charge.class, () -> new Charge("ch-" + order.id()));
                    ctx.sleep("cool-off", Duration.ofMillis(200)); // durable: survives restarts
                    Awakeable<String> approval = ctx.awakeable("approval", String.class);
                    ctx.run("ask", () -> requestApproval(order.id(), approval.id())); // a step with no result
                    String approver = approval.await(); // suspends until completed
                    String parcel = ctx.child("ship", "shipping", order.id(), order, String.class).await();
                    return c.chargeId() + " approved by " + approver + ", " + parcel;
                })
                .register("shipping", Order.class, String.class,
                        (ctx, order) -> ctx.step("label", String.class, () -> "parcel-" + order.id()));
        WorkflowEngine engine = WorkflowEngine.builder(store, workflows).build();
        engine.resumeWorker(ResumeOptions.defaults()).start(); // recovery, sleeps, wakes from elsewhere
        engine.start("fulfil", "order-42", new Order("42", 1999), String.class);
        return engine;
    }

    /** The end of the workflow example: the approver answers, and the result arrives. */
    public String approve(WorkflowEngine engine, java.util.UUID approvalId) throws Exception {
        engine.completeAwakeable(approvalId, "alice"); // from any process: WorkflowClient.create(store)
        String result = engine.handle("fulfil", "order-42", String.class).await(Duration.ofMinutes(1));
        return result;
    }

    /** The end of the workflow example; whether every run and resume worker stopped in time. */
    public boolean stop(WorkflowEngine engine) {
        return engine.stop(Duration.ofSeconds(30)); // runs and resume workers finish, then a forced stop
    }

    /** The awakeable ids the workflow example handed out, by order id. */
    public final java.util.Map<String, java.util.UUID> approvals = new java.util.concurrent.ConcurrentHashMap<>();

    private void requestApproval(String order, java.util.UUID awakeable) {
        approvals.put(order, awakeable); // e.g. e-mail a link; the approver calls completeAwakeable
    }
}
