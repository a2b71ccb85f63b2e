package dev.waymark.chaos;

import dev.waymark.kafka.DeadLetterHeaders;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamNames;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.subscription.Checkpoints;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Checks the invariants of a chaos run: continuously (every second, while faults are injected) and
 * once at the end, after the faults stopped and everything drained. Violations are collected, never
 * thrown, so the run always ends with a full report.
 */
final class Auditor {

    /** The result of one final check: a name, whether it held, and what was measured. */
    record Check(String name, boolean held, String detail) {}

    private final String jdbcUrl;
    private final String bootstrap;
    private final String topic;
    private final int partitions;
    private final ChaosLog log;
    private final List<String> violations = new ArrayList<>();
    private final Map<Integer, long[]> lastCheckpoint = new HashMap<>();
    private final Map<Integer, Long> lastEpoch = new HashMap<>();
    private final Map<String, String> ownerAtEpoch = new HashMap<>();
    final AtomicLong samples = new AtomicLong();
    final AtomicLong skippedSamples = new AtomicLong();
    private volatile boolean running;
    private Thread thread;
    private Connection connection;

    Auditor(String jdbcUrl, String bootstrap, String topic, int partitions, ChaosLog log) {
        this.jdbcUrl = jdbcUrl;
        this.bootstrap = bootstrap;
        this.topic = topic;
        this.partitions = partitions;
        this.log = log;
    }

    // ---------------------------------------------------------------------------------------------
    // continuous

    void startContinuous() {
        running = true;
        thread = Thread.ofPlatform().name("chaos-auditor").start(() -> {
            while (running) {
                try {
                    sample();
                    samples.incrementAndGet();
                } catch (SQLException e) {
                    skippedSamples.incrementAndGet(); // the database is away (a fault): sample again later
                    closeConnection();
                }
                try {
                    TimeUnit.SECONDS.sleep(1); // sampling period
                } catch (InterruptedException e) {
                    return;
                }
            }
            closeConnection();
        });
    }

    void stopContinuous() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(30_000);
    }

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException e) {
                // already broken
            }
            connection = null;
        }
    }

    /** One sample: checkpoints never move backwards; one owner per (bucket, epoch); epochs never decrease. */
    void sample() throws SQLException {
        if (connection == null) {
            Properties p = new Properties();
            p.setProperty("connectTimeout", "3");
            p.setProperty("socketTimeout", "10");
            connection = DriverManager.getConnection(jdbcUrl, p);
        }
        try (Statement s = connection.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT member, position_tx, position_seq FROM waymark.checkpoints"
                    + " WHERE subscription = '" + ChaosWorker.POOL + "'")) {
                while (rs.next()) {
                    int member = rs.getInt(1);
                    long[] now = {rs.getLong(2), rs.getLong(3)};
                    long[] before = lastCheckpoint.put(member, now);
                    if (before != null && (now[0] < before[0] || (now[0] == before[0] && now[1] < before[1]))) {
                        violation(
                                "checkpoint of member " + member + " moved backwards: (" + before[0] + ", " + before[1]
                                        + ") -> (" + now[0] + ", " + now[1] + ")");
                    }
                }
            }
            try (ResultSet rs = s
                    .executeQuery("SELECT bucket, owner, epoch, lease_expires_at > now() FROM waymark.shards"
                            + " WHERE subscription = '" + ChaosWorker.POOL + "'")) {
                while (rs.next()) {
                    int bucket = rs.getInt(1);
                    String owner = rs.getString(2);
                    long epoch = rs.getLong(3);
                    Long before = lastEpoch.put(bucket, epoch);
                    if (before != null && epoch < before) {
                        violation("epoch of bucket " + bucket + " decreased: " + before + " -> " + epoch);
                    }
                    if (owner != null && rs.getBoolean(4)) {
                        String previous = ownerAtEpoch.putIfAbsent(bucket + "@" + epoch, owner);
                        if (previous != null && !previous.equals(owner)) {
                            violation("bucket " + bucket + " has two live owners at epoch " + epoch + ": " + previous
                                    + " and " + owner);
                        }
                    }
                }
            }
        }
    }

    private synchronized void violation(String text) {
        violations.add(text);
        log.note("VIOLATION " + text);
    }

    synchronized List<String> continuousViolations() {
        return List.copyOf(violations);
    }

    // ---------------------------------------------------------------------------------------------
    // drained?

    /** Whether everything is drained: every event handled, no workflow open, every partition committed to its end. */
    boolean drained(EventStore store) throws Exception {
        return count(store, "SELECT count(*) FROM waymark.events e WHERE e.category = '" + ChaosWorker.CATEGORY
                + "' AND NOT EXISTS (SELECT 1 FROM handled h WHERE h.event_id = e.event_id)") == 0
                && checkpointsAtHead(store).isEmpty()
                && count(store, "SELECT count(*) FROM waymark.workflows WHERE status IN ('running', 'suspended')") == 0
                && lagging().isEmpty();
    }

    // ---------------------------------------------------------------------------------------------
    // final

    List<Check> finalAudit(EventStore store, LoadDriver load, Map<String, Long> counts) throws Exception {
        List<Check> checks = new ArrayList<>();
        List<String> continuous = continuousViolations();
        checks.add(new Check("continuous: checkpoints never moved backwards; no bucket had two live owners at one"
                + " epoch; epochs never decreased", continuous.isEmpty(),
                samples.get() + " samples ("
                        + skippedSamples.get() + " skipped while the database was away)"
                        + (continuous.isEmpty() ? "" : "; " + String.join("; ", continuous))));

        // --- sharded pool
        long events = count(store,
                "SELECT count(*) FROM waymark.events WHERE category = '" + ChaosWorker.CATEGORY + "'");
        long missing = count(store, "SELECT count(*) FROM waymark.events e WHERE e.category = '" + ChaosWorker.CATEGORY
                + "' AND NOT EXISTS (SELECT 1 FROM handled h WHERE h.event_id = e.event_id)");
        List<String> missingSample = strings(store,
                "SELECT e.stream_id || '@' || e.stream_version FROM waymark.events e"
                        + " WHERE e.category = '" + ChaosWorker.CATEGORY
                        + "' AND NOT EXISTS (SELECT 1 FROM handled h WHERE"
                        + " h.event_id = e.event_id) ORDER BY e.global_position LIMIT 10");
        long deliveries = count(store, "SELECT count(*) FROM handled");
        long distinct = count(store, "SELECT count(DISTINCT event_id) FROM handled");
        long strangers = count(store, "SELECT count(*) FROM handled h WHERE NOT EXISTS (SELECT 1 FROM waymark.events e"
                + " WHERE e.event_id = h.event_id)");
        long deadLetters = count(store, "SELECT count(*) FROM waymark.dead_letters WHERE subscription = '"
                + ChaosWorker.POOL + "'");
        counts.put("pool events", events);
        counts.put("pool deliveries", deliveries);
        counts.put("pool duplicate deliveries", deliveries - distinct);
        counts.put("pool dead letters", deadLetters);
        checks.add(new Check("pool: every committed event of the category handled at least once", missing == 0
                && strangers == 0,
                events + " events, " + distinct + " handled, " + missing + " missing"
                        + (missing == 0 ? "" : " (first: " + missingSample + ")") + ", " + strangers
                        + " handled rows of no event"));
        checks.add(new Check("pool: no event dead-lettered (none is poison)", deadLetters == 0, deadLetters
                + " dead letters"));
        List<String> behind = checkpointsAtHead(store);
        checks.add(new Check("pool: none skipped — every bucket's checkpoint is at or past its last event",
                behind.isEmpty(),
                behind.isEmpty() ? ChaosWorker.SHARDS + " buckets at their head" : String.join("; ", behind)));
        List<String> twoOwners = strings(store, "SELECT bucket || '@' || epoch || ': pids ' || string_agg(DISTINCT"
                + " pid::text, ',') FROM handled GROUP BY bucket, epoch HAVING count(DISTINCT pid) > 1");
        long epochs = count(store, "SELECT count(*) FROM (SELECT DISTINCT bucket, epoch FROM handled) t");
        checks.add(new Check("pool: each (bucket, epoch) delivered by one worker JVM only", twoOwners.isEmpty(),
                epochs + " (bucket, epoch) pairs delivered" + (twoOwners.isEmpty() ? "" : "; shared: " + twoOwners)));

        // --- workflows
        Map<String, Long> statuses = new TreeMap<>();
        try (Connection c = StoreInternals.of(store).dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s
                        .executeQuery("SELECT name || ' ' || status, count(*) FROM waymark.workflows GROUP BY 1")) {
            while (rs.next()) {
                statuses.put(rs.getString(1), rs.getLong(2));
            }
        }
        statuses.forEach((k, v) -> counts.put("workflows " + k, v));
        long flows = count(store, "SELECT count(*) FROM waymark.workflows WHERE name = '" + ChaosWorker.FLOW + "'");
        long open = count(store, "SELECT count(*) FROM waymark.workflows WHERE status NOT IN ('completed', 'failed',"
                + " 'cancelled')");
        List<String> openSample = strings(store, "SELECT name || '/' || id || ' ' || status || coalesce(' waiting on '"
                + " || waiting_on, '') || coalesce(' last error ' || last_error, '') FROM waymark.workflows WHERE status"
                + " NOT IN ('completed', 'failed', 'cancelled') ORDER BY created_at LIMIT 5");
        checks.add(new Check("workflows: every started workflow ended (completed, failed with a reason, or cancelled)",
                open == 0 && flows >= load.workflowsStarted.get(), flows + " " + ChaosWorker.FLOW + " instances ("
                        + load.workflowsStarted.get() + " starts acknowledged to the driver), " + open + " still open"
                        + (open == 0 ? "" : " " + openSample) + "; by status " + statuses));
        List<String> failedWithoutReason = strings(store, "SELECT name || '/' || id FROM waymark.workflows WHERE status"
                + " = 'failed' AND (failure IS NULL OR failure = '') LIMIT 10");
        List<String> failures = strings(store, "SELECT name || '/' || id || ': ' || left(failure, 200) FROM"
                + " waymark.workflows WHERE status = 'failed' ORDER BY id LIMIT 10");
        checks.add(new Check("workflows: every failed workflow has a recorded reason", failedWithoutReason.isEmpty(),
                (failures.isEmpty() ? "none failed" : "failed: " + failures)
                        + (failedWithoutReason.isEmpty() ? "" : "; without a reason: " + failedWithoutReason)));
        List<String> twice = strings(store, "SELECT s.stream_name || ' ' || (e.data ->> 'step') || ' x' || count(*)"
                + " FROM waymark.events e JOIN waymark.streams s ON s.stream_id = e.stream_id WHERE s.stream_name LIKE"
                + " '$wf-%' AND e.event_type = 'StepRecorded' GROUP BY s.stream_name, e.data ->> 'step' HAVING count(*) > 1"
                + " LIMIT 10");
        long journaled = count(store, "SELECT count(*) FROM waymark.events e JOIN waymark.streams s ON s.stream_id ="
                + " e.stream_id WHERE s.stream_name LIKE '$wf-%' AND e.event_type = 'StepRecorded'");
        checks.add(new Check("workflows: no step journaled twice", twice.isEmpty(), journaled + " step entries"
                + (twice.isEmpty() ? "" : "; twice: " + twice)));
        List<String> noEffect = strings(store, "SELECT w.name || '/' || w.id || ' lacks ' || st.step FROM"
                + " waymark.workflows w CROSS JOIN LATERAL (VALUES ('reserve'), ('close')) AS st(step) WHERE w.name = '"
                + ChaosWorker.FLOW + "' AND w.status = 'completed' AND NOT EXISTS (SELECT 1 FROM wf_effects f WHERE"
                + " f.workflow = w.name || '/' || w.id AND f.step = st.step) LIMIT 10");
        List<String> noChildEffect = strings(store, "SELECT w.name || '/' || w.id || ' lacks ' || st.step FROM"
                + " waymark.workflows w CROSS JOIN LATERAL (VALUES ('pack'), ('label')) AS st(step) WHERE w.name = '"
                + ChaosWorker.CHILD + "' AND w.status = 'completed' AND NOT EXISTS (SELECT 1 FROM wf_effects f WHERE"
                + " f.workflow = w.name || '/' || w.id AND f.step = st.step) LIMIT 10");
        long incompleteParents = count(store, "SELECT count(*) FROM waymark.workflows p WHERE p.name = '"
                + ChaosWorker.FLOW + "' AND p.status = 'completed' AND NOT EXISTS (SELECT 1 FROM waymark.workflows c"
                + " WHERE c.name = '" + ChaosWorker.CHILD
                + "' AND c.id = p.id || '.child' AND c.status = 'completed')");
        long effects = count(store, "SELECT count(*) FROM wf_effects");
        long effectRepeats = effects
                - count(store, "SELECT count(*) FROM (SELECT DISTINCT workflow, step FROM wf_effects) t");
        counts.put("workflow step actions run", effects);
        counts.put("workflow step actions run more than once (duplicates)", effectRepeats);
        checks.add(new Check("workflows: every completed workflow ran each of its steps and its child completed",
                noEffect.isEmpty() && noChildEffect.isEmpty() && incompleteParents == 0, effects
                        + " step actions run, " + effectRepeats + " of them repeats"
                        + (noEffect.isEmpty() && noChildEffect.isEmpty()
                                ? ""
                                : "; missing: " + noEffect + noChildEffect)
                        + "; completed parents without a completed child: "
                        + incompleteParents));

        // --- Kafka
        kafkaChecks(store, checks, counts);
        return checks;
    }

    private void kafkaChecks(EventStore store, List<Check> checks, Map<String, Long> counts) throws Exception {
        Map<String, String> records = readTopic(topic, partitions); // "p@o" -> value
        Map<String, String> dlt = new HashMap<>(); // "p@o" of the original -> reason
        long dltRecords = 0;
        List<String> dltWithoutReason = new ArrayList<>();
        for (ConsumerRecord<String, String> r : readAll(topic + ".DLT", 1)) {
            dltRecords++;
            String at = header(r, DeadLetterHeaders.ORIGINAL_PARTITION) + "@"
                    + header(r, DeadLetterHeaders.ORIGINAL_OFFSET);
            String reason = header(r, DeadLetterHeaders.REASON);
            if (reason == null || reason.isBlank()) {
                dltWithoutReason.add(at);
            }
            dlt.put(at, reason);
        }
        Set<String> handled = new HashSet<>(strings(store, "SELECT kpartition || '@' || koffset FROM kafka_handled"));
        long handledRows = count(store, "SELECT count(*) FROM kafka_handled");
        List<String> notHandled = new ArrayList<>();
        List<String> poisonMissing = new ArrayList<>();
        List<String> wronglyDead = new ArrayList<>();
        List<String> poisonHandled = new ArrayList<>();
        long poison = 0;
        for (var e : records.entrySet()) {
            boolean isPoison = e.getValue().contains("\"poison\":true");
            if (isPoison) {
                poison++;
                if (!dlt.containsKey(e.getKey())) {
                    poisonMissing.add(e.getKey());
                }
                if (handled.contains(e.getKey())) {
                    poisonHandled.add(e.getKey());
                }
            } else {
                if (!handled.contains(e.getKey())) {
                    notHandled.add(e.getKey());
                }
                if (dlt.containsKey(e.getKey())) {
                    wronglyDead.add(e.getKey());
                }
            }
        }
        counts.put("Kafka records in the topic", (long) records.size());
        counts.put("Kafka poison records", poison);
        counts.put("Kafka handled rows", handledRows);
        counts.put("Kafka duplicate handlings", handledRows - handled.size());
        counts.put("Kafka dead-letter records", dltRecords);
        counts.put("Kafka duplicate dead letters", dltRecords - dlt.size());
        checks.add(new Check("kafka: every valid record handled", notHandled.isEmpty() && wronglyDead.isEmpty(),
                (records.size() - poison) + " valid records, " + notHandled.size() + " not handled"
                        + (notHandled.isEmpty() ? "" : " " + first(notHandled)) + ", " + wronglyDead.size()
                        + " dead-lettered" + (wronglyDead.isEmpty() ? "" : " " + first(wronglyDead))));
        checks.add(new Check("kafka: every poison record in the dead-letter topic with its reason header",
                poisonMissing.isEmpty() && dltWithoutReason.isEmpty() && poisonHandled.isEmpty(), poison
                        + " poison records, " + poisonMissing.size() + " missing from the DLT"
                        + (poisonMissing.isEmpty()
                                ? ""
                                : " " + first(poisonMissing))
                        + ", " + dltWithoutReason.size() + " DLT records without a reason, "
                        + poisonHandled.size() + " handled as valid"));
        Map<Integer, String> lag = lagging();
        checks.add(new Check("kafka: the group's committed offsets reach the end offsets", lag.isEmpty(),
                lag.isEmpty() ? partitions + " partitions fully committed" : "behind: " + lag));
    }

    private static List<String> first(List<String> items) {
        return items.subList(0, Math.min(10, items.size()));
    }

    /** Partitions whose committed offset is below the end offset: partition -> "committed/end". */
    Map<Integer, String> lagging() throws Exception {
        Map<Integer, String> behind = new TreeMap<>();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(ChaosWorker.GROUP)
                    .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetSpec> request = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                request.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            var ends = admin.listOffsets(request).all().get(10, TimeUnit.SECONDS);
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                long end = ends.get(tp).offset();
                OffsetAndMetadata c = committed.get(tp);
                long at = c == null ? 0 : c.offset();
                if (at < end) {
                    behind.put(p, at + "/" + end);
                }
            }
        }
        return behind;
    }

    private Map<String, String> readTopic(String name, int count) {
        Map<String, String> out = new LinkedHashMap<>();
        for (ConsumerRecord<String, String> r : readAll(name, count)) {
            out.put(r.partition() + "@" + r.offset(), r.value());
        }
        return out;
    }

    private List<ConsumerRecord<String, String>> readAll(String name, int count) {
        Properties p = new Properties();
        p.putAll(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName(),
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName()));
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                tps.add(new TopicPartition(name, i));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = consumer.endOffsets(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read " + name + " to its end offsets " + ends);
                }
                consumer.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    private static String header(ConsumerRecord<String, String> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /** Buckets whose checkpoint is before the position of their last event: "bucket: checkpoint vs last". */
    static List<String> checkpointsAtHead(EventStore store) {
        Map<Integer, GlobalPosition> last = new HashMap<>();
        try (var events = store.categoryForward(ChaosWorker.CATEGORY, GlobalPosition.START, 2000)) {
            events.forEach((RecordedEvent e) -> last.put(StreamNames.member(e.streamName(), ChaosWorker.SHARDS),
                    e.position()));
        }
        List<String> behind = new ArrayList<>();
        for (var entry : new TreeMap<>(last).entrySet()) {
            Optional<GlobalPosition> at = Checkpoints.of(store).get(ChaosWorker.POOL,
                    Partition.of(entry.getKey(), ChaosWorker.SHARDS));
            // at its last event, or past it once the bucket's cursor moved up to the horizon
            if (at.filter(p -> !entry.getValue().isAfter(p)).isEmpty()) {
                behind.add("bucket " + entry.getKey() + ": checkpoint " + at.map(Object::toString).orElse("none")
                        + ", last event " + entry.getValue());
            }
        }
        return behind;
    }

    private static long count(EventStore store, String sql) throws SQLException {
        try (Connection c = StoreInternals.of(store).dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static List<String> strings(EventStore store, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = StoreInternals.of(store).dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }
}
