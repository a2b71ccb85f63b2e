package dev.waymark.demo;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.subscription.shard.ShardOwnership;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.WorkflowQuery;
import dev.waymark.workflow.status.WorkflowStatus;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The system scenario: orders appended as events; a sharded pool of three worker JVMs handles the
 * order category and starts a fulfilment workflow per order; one worker is killed with SIGKILL
 * mid-run and its buckets and workflows are taken over; an approval desk completes the workflows'
 * awakeables; every workflow spawns a shipping child. Ends with the invariants it checked.
 */
public final class DemoScenario {

    private static final int ORDERS = 24;
    /** The order whose payment request is poison (a negative amount). */
    private static final int POISON = 13;

    private final PrintStream out;
    private final String url;
    private final String schema;
    private final DataSource dataSource;
    private final EventStore store;
    private final String kafka;
    private final String topic;
    private int failures;

    /** A scenario on {@code store}; worker JVMs connect to {@code url}; payments go through Kafka at {@code kafka}. */
    public DemoScenario(PrintStream out, String url, EventStore store, String kafka) {
        this.topic = "payments-" + Long.toString(System.currentTimeMillis(), 36); // a fresh topic per run
        this.out = out;
        this.url = url;
        this.schema = store.schema();
        this.dataSource = StoreInternals.of(store).dataSource();
        this.store = store;
        this.kafka = kafka;
    }

    /** Runs the scenario; returns the number of failed checks. */
    @SuppressWarnings("try") // the payment service runs for the scenario's duration; the body never calls it
    public int run() throws Exception {
        sql("CREATE TABLE demo_handled (id bigserial PRIMARY KEY, event_id uuid NOT NULL, stream text NOT NULL,"
                + " bucket int NOT NULL, worker text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())");
        sql("CREATE TABLE demo_steps (id bigserial PRIMARY KEY, workflow text NOT NULL, step text NOT NULL,"
                + " worker text NOT NULL)");
        sql("CREATE TABLE demo_approvals (workflow text PRIMARY KEY, awakeable uuid NOT NULL,"
                + " approved boolean NOT NULL DEFAULT false)");
        sql("CREATE TABLE demo_payments (order_id text PRIMARY KEY, amount_cents bigint NOT NULL, message_id text NOT NULL)");
        DemoKafka.createTopics(kafka, topic);
        out.println("[10] Kafka at " + kafka + ": topics " + topic + " (3 partitions) and " + topic + ".DLT");
        WorkflowClient client = WorkflowClient.create(store);
        long started = 0;
        try (WorkerProcesses workers = new WorkerProcesses(out);
                Approver approver = new Approver(dataSource, schema, client);
                PaymentService payments = new PaymentService(kafka, topic, dataSource, schema)) {
            out.println("[11] starting three worker JVMs: each is a member of the sharded pool 'fulfilment' (6 buckets)"
                    + " and runs a workflow engine and a resume worker");
            WorkerProcesses.Worker w1 = workers.start("worker-1", url, schema, "worker-1", kafka, topic);
            WorkerProcesses.Worker w2 = workers.start("worker-2", url, schema, "worker-2", kafka, topic);
            WorkerProcesses.Worker w3 = workers.start("worker-3", url, schema, "worker-3", kafka, topic);
            awaitCondition("the three workers share the buckets", Duration.ofSeconds(60),
                    () -> owners().size() == 3 && ownership().stream().allMatch(ShardOwnership::live));
            out.println("     ownership: " + describeOwnership(w1, w2, w3));
            out.println("[12] placing " + ORDERS / 2 + " orders (events in the 'order' category) ...");
            started = System.nanoTime();
            placeOrders(1, ORDERS / 2);
            awaitCondition("some orders are handled", Duration.ofSeconds(60),
                    () -> count("SELECT count(*) FROM demo_handled") >= 3);
            Set<Integer> lost = ownership().stream().filter(o -> o.owner().filter(w2.workerId()::equals).isPresent())
                    .map(ShardOwnership::bucket).collect(Collectors.toSet());
            long running = client
                    .list(WorkflowQuery.builder().status(WorkflowStatus.RUNNING).name("fulfilment").limit(1000).build())
                    .size()
                    + client.list(WorkflowQuery.builder().status(WorkflowStatus.SUSPENDED).name("fulfilment")
                            .limit(1000).build()).size();
            workers.kill(w2);
            long killedAt = System.nanoTime();
            out.println("[13] killed worker-2 with SIGKILL (it held buckets " + lost + "; " + running
                    + " fulfilment workflow(s) were in flight across the pool)");
            out.println("[14] placing " + (ORDERS - ORDERS / 2) + " more orders while worker-2 is gone ...");
            placeOrders(ORDERS / 2 + 1, ORDERS);
            awaitCondition("worker-2's buckets are taken over", Duration.ofSeconds(60),
                    () -> owners().size() == 2 && !owners().contains(w2.workerId())
                            && ownership().stream().allMatch(ShardOwnership::live));
            double takeover = (System.nanoTime() - killedAt) / 1e9;
            out.printf("     buckets %s taken over %.1f s after the kill (lease TTL %d s): %s%n", lost, takeover,
                    DemoWorker.TTL.toSeconds(), describeOwnership(w1, w3));

            out.println(
                    "[15] waiting for every order to be fulfilled (cool-off sleep, approval by the desk, shipping child) ...");
            awaitCondition("every fulfilment workflow completes", Duration.ofSeconds(120),
                    () -> client.list(WorkflowQuery.builder().status(WorkflowStatus.COMPLETED).name("fulfilment")
                            .limit(1000).build()).size() == ORDERS);
            out.println("     " + client.handle("fulfilment", "o-1", String.class).await(Duration.ofSeconds(5)));
            out.printf("     all %d orders fulfilled %.1f s after the first was placed; the desk approved %d%n", ORDERS,
                    (System.nanoTime() - started) / 1e9, approver.approved());
            out.println("[16] the payment service consumes the charge steps' payment requests from Kafka ...");
            awaitCondition("every valid payment is recorded and the poison request dead-lettered",
                    Duration.ofSeconds(60),
                    () -> count("SELECT count(*) FROM demo_payments") == ORDERS - 1
                            && DemoKafka.deadLetters(kafka, topic + ".DLT").size() == 1);
            out.println(
                    "     " + count("SELECT count(*) FROM demo_payments") + " payments recorded; dead-letter topic: "
                            + DemoKafka.deadLetters(kafka, topic + ".DLT"));
        }
        report(client);
        return failures;
    }

    private void report(WorkflowClient client) throws Exception {
        out.println("[17] invariants");
        long distinct = count("SELECT count(DISTINCT event_id) FROM demo_handled");
        long deliveries = count("SELECT count(*) FROM demo_handled");
        check(distinct == ORDERS, "every order event handled (" + distinct + " of " + ORDERS + "; "
                + (deliveries - distinct) + " redelivered after the kill, which handlers must tolerate)");
        long fulfilled = client
                .list(WorkflowQuery.builder().status(WorkflowStatus.COMPLETED).name("fulfilment").limit(1000).build())
                .size();
        long shipped = client
                .list(WorkflowQuery.builder().status(WorkflowStatus.COMPLETED).name("shipping").limit(1000).build())
                .size();
        check(fulfilled == ORDERS && shipped == ORDERS, "every order fulfilled, each with its shipping child ("
                + fulfilled + " fulfilments, " + shipped + " shipments completed)");
        long failed = client.list(WorkflowQuery.builder().status(WorkflowStatus.FAILED).limit(1000).build()).size();
        check(failed == 0, "no workflow failed (" + failed + ")");
        long journaledTwice = count("SELECT count(*) FROM (SELECT e.stream_id, e.data ->> 'step' FROM \"" + schema
                + "\".events e WHERE e.event_type = 'StepRecorded' GROUP BY 1, 2 HAVING count(*) > 1) d");
        check(journaledTwice == 0, "no workflow step journaled twice");
        long reran = count("SELECT count(*) FROM (SELECT workflow, step FROM demo_steps GROUP BY 1, 2"
                + " HAVING count(*) > 1) d");
        out.println("     (steps whose action ran more than once: " + reran
                + " — only a step cut short by the SIGKILL may run again; its result is journaled once)");
        check(count("SELECT count(*) FROM demo_approvals WHERE approved") == ORDERS,
                "every approval completed by the desk");
        long paid = count("SELECT count(*) FROM demo_payments");
        check(paid == ORDERS - 1,
                "every valid payment request consumed from Kafka exactly once in effect (" + paid + " of "
                        + (ORDERS - 1) + ")");
        java.util.List<String> dead = DemoKafka.deadLetters(kafka, topic + ".DLT");
        check(dead.size() == 1 && dead.get(0).startsWith("o-" + POISON + " "), "the poison payment request is in the"
                + " dead-letter topic with its reason (" + dead + ")");
    }

    private void placeOrders(int from, int to) {
        for (int i = from; i <= to; i++) {
            store.append("order-" + i, ExpectedVersion.noStream(),
                    List.of(EventData.of("OrderPlaced",
                            Map.of("order", "o-" + i, "total", i == POISON ? -1 : 1000 + i))));
        }
    }

    private List<ShardOwnership> ownership() {
        return ShardedSubscription.ownership(store, "fulfilment");
    }

    private Set<String> owners() {
        return ownership().stream().filter(ShardOwnership::live).flatMap(o -> o.owner().stream())
                .collect(Collectors.toSet());
    }

    private String describeOwnership(WorkerProcesses.Worker... workers) {
        StringBuilder b = new StringBuilder();
        for (WorkerProcesses.Worker w : workers) {
            List<Integer> buckets = ownership().stream().filter(o -> o.owner().filter(w.workerId()::equals).isPresent())
                    .map(ShardOwnership::bucket).toList();
            b.append(w.label()).append(" ").append(buckets).append("  ");
        }
        return b.toString().trim();
    }

    private void awaitCondition(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "demo: timed out after " + timeout.toSeconds() + " s waiting until " + what);
            }
            Thread.sleep(100);
        }
    }

    private void check(boolean ok, String what) {
        out.println("     " + (ok ? "ok    " : "FAILED") + " " + what);
        if (!ok) {
            failures++;
        }
    }

    private void sql(String statement) throws Exception {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(qualified(statement));
        }
    }

    private long count(String query) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(qualified(query))) {
            rs.next();
            return rs.getLong(1);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("demo query failed: " + query, e);
        }
    }

    private String qualified(String statement) {
        return statement.replace(" demo_", " \"" + schema + "\".demo_");
    }
}
