package dev.waymark.subscription.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamNames;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker process stopped with SIGSTOP while one of its transactions holds a transaction id and
 * lease rows (DESIGN decision 8): the server ends that transaction within the internal transaction
 * timeout, so every other reader on the server goes on delivering within that bound, and the frozen
 * worker's buckets are taken over within {@code leaseTtl + 2 * renewInterval + bound}. Nothing is
 * skipped, and when the worker wakes its transaction does not commit and its fenced checkpoint
 * writes are refused.
 */
class FrozenWorkerTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int SHARDS = 4;
    private static final Duration TTL = Duration.ofSeconds(2);
    private static final Duration RENEW = Duration.ofMillis(400);
    private static final Duration BOUND = Duration.ofSeconds(2);
    /** What a reader needs beyond the bound: a wake or a 100 ms poll, one read. */
    private static final Duration READER_SLACK = Duration.ofSeconds(1);
    private static final Pattern WORKER_LINE = Pattern.compile("worker (\\S+) pid (\\d+)");

    private static EventStore store;

    @BeforeAll
    static void setUp() throws Exception {
        store = EventStore.builder(POSTGRES.dataSource()).internalTransactionTimeout(BOUND).build();
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE handled (id bigserial PRIMARY KEY, event_id uuid NOT NULL, bucket int NOT NULL,"
                    + " epoch bigint NOT NULL, worker text NOT NULL)");
        }
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static void signal(long pid, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -%s %s", signal, pid).isTrue();
    }

    private static long query(String sql) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static Set<Integer> bucketsOf(String owner) {
        Set<Integer> buckets = new TreeSet<>();
        ShardedSubscription.ownership(store, "frozen").stream().filter(o -> o.owner().filter(owner::equals).isPresent())
                .forEach(o -> buckets.add(o.bucket()));
        return buckets;
    }

    /** Whether a lease row of {@code owner} is locked by another transaction now. */
    private static boolean leaseRowsLocked(String owner) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement p = c.prepareStatement("SELECT bucket FROM waymark.shards WHERE subscription ="
                    + " 'frozen' AND owner = ? FOR UPDATE NOWAIT")) {
                p.setString(1, owner);
                p.executeQuery().close();
                return false;
            } catch (java.sql.SQLException e) {
                if ("55P03".equals(e.getSQLState())) {
                    return true;
                }
                throw e;
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
    }

    private static boolean checkpointsAtHead() {
        Map<Integer, GlobalPosition> last = new HashMap<>();
        for (RecordedEvent e : store.categoryForward("frz", GlobalPosition.START, 2000).toList()) {
            last.put(StreamNames.member(e.streamName(), SHARDS), e.position());
        }
        return last.entrySet().stream().allMatch(entry -> Checkpoints.of(store)
                .get("frozen", Partition.of(entry.getKey(), SHARDS)).filter(at -> !entry.getValue().isAfter(at))
                .isPresent());
    }

    @Test
    void a_worker_frozen_inside_its_transaction_holds_back_no_reader_and_loses_its_buckets_within_the_bound()
            throws Exception {
        Path dir = Files.createTempDirectory("frozen-worker");
        Path release = dir.resolve("release");
        Path log = Path.of("target", "frozen-worker.log");
        Files.createDirectories(log.getParent());
        String java = ProcessHandle.current().info().command().orElse("java");
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                FrozenWorkerProcess.class.getName(), POSTGRES.jdbcUrl(), "frozen", "frz", Integer.toString(SHARDS),
                Long.toString(TTL.toMillis()), Long.toString(RENEW.toMillis()), Long.toString(BOUND.toMillis()),
                release.toString()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        OutputStream childIn = child.getOutputStream();
        Map<UUID, Long> probeAppended = new ConcurrentHashMap<>();
        Map<UUID, Long> probeDelivered = new ConcurrentHashMap<>();
        Map<Integer, Long> claimedAt = new ConcurrentHashMap<>();
        AtomicBoolean appending = new AtomicBoolean(true);
        Thread appender = null;
        ShardedSubscription survivor = null;
        Subscription probe = null;
        try {
            String[] found = new String[2];
            await("the child worker started").atMost(Duration.ofSeconds(60)).until(() -> {
                Matcher m = WORKER_LINE.matcher(Files.readString(log));
                if (m.find()) {
                    found[0] = m.group(1);
                    found[1] = m.group(2);
                    return true;
                }
                return !child.isAlive();
            });
            assertThat(child.isAlive()).as("child running (see %s)", log).isTrue();
            String childId = found[0];
            long pid = Long.parseLong(found[1]);

            // another subscription on the same server, reading another category
            probe = Subscription.builder(store, "probe-reader", Target.category("probe"))
                    .pollInterval(Duration.ofMillis(100))
                    .start(d -> {
                        probeDelivered.putIfAbsent(d.event().eventId(), System.nanoTime());
                        return Ack.ok();
                    });
            appender = Thread.ofPlatform().name("frozen-test-appender").start(() -> {
                for (int i = 0; appending.get(); i++) {
                    store.append("frz-" + (i % 16), ExpectedVersion.any(), EventData.json("Work", "{\"i\":" + i + "}"));
                    if (i % 5 == 0) {
                        long at = System.nanoTime();
                        UUID id = store.append("probe-" + (i % 3), ExpectedVersion.any(), EventData.json("Probe", "{}"))
                                .eventIds().get(0);
                        probeAppended.put(id, at);
                    }
                    try {
                        Thread.sleep(20); // the pace of the load, not a wait for a condition
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            survivor = ShardedSubscription.builder(store, "frozen", Target.category("frz"))
                    .shards(SHARDS).leaseTtl(TTL).renewInterval(RENEW).retry(RetryPolicy.fixed(5, Duration.ZERO))
                    .listener(new ShardListener() {
                        @Override
                        public void claimed(String workerId, int bucket, long epoch) {
                            claimedAt.put(bucket, System.nanoTime());
                        }
                    })
                    .start(d -> {
                        try (Connection c = POSTGRES.dataSource().getConnection();
                                PreparedStatement p = c.prepareStatement("INSERT INTO handled (event_id, bucket,"
                                        + " epoch, worker) VALUES (?, ?, ?, 'survivor')")) {
                            p.setObject(1, d.event().eventId());
                            p.setInt(2, d.bucket());
                            p.setLong(3, d.epoch());
                            p.executeUpdate();
                        }
                        return Ack.ok();
                    });
            String survivorId = survivor.workerId();
            await("the two workers share the buckets and the child handles events").atMost(Duration.ofSeconds(60))
                    .until(() -> bucketsOf(childId).size() == SHARDS / 2 && bucketsOf(survivorId).size() == SHARDS / 2
                            && query("SELECT count(*) FROM handled WHERE worker = 'child'") > 20);

            childIn.write("arm\n".getBytes(StandardCharsets.UTF_8));
            childIn.flush();
            await("the child is inside a transaction holding lease or checkpoint rows").atMost(Duration.ofSeconds(30))
                    .until(() -> Files.readString(log).contains("WINDOW "));
            signal(pid, "STOP");
            long stoppedAt = System.nanoTime();
            Set<Integer> frozenBuckets = bucketsOf(childId);
            claimedAt.keySet().removeAll(frozenBuckets);
            assertThat(frozenBuckets).isNotEmpty();
            assertThat(leaseRowsLocked(childId)).as("the frozen transaction holds lease rows").isTrue();

            // other readers go on: an event appended after the freeze is delivered within the bound
            UUID after = await().atMost(Duration.ofSeconds(5)).until(() -> probeAppended.entrySet().stream()
                    .filter(e -> e.getValue() - stoppedAt > TimeUnit.MILLISECONDS.toNanos(200)).map(Map.Entry::getKey)
                    .findFirst().orElse(null), id -> id != null);
            await("a probe event appended during the freeze is delivered").atMost(BOUND.plus(READER_SLACK))
                    .until(() -> probeDelivered.containsKey(after));

            // the frozen worker's buckets are taken over within leaseTtl + 2 * renewInterval + bound
            Duration takeover = TTL.plus(RENEW.multipliedBy(2)).plus(BOUND);
            await("the survivor claims the frozen worker's buckets").atMost(takeover.plusSeconds(5))
                    .until(() -> claimedAt.keySet().containsAll(frozenBuckets));
            for (int b : frozenBuckets) {
                assertThat(Duration.ofNanos(claimedAt.get(b) - stoppedAt)).as("bucket %d taken over", b)
                        .isLessThanOrEqualTo(takeover);
            }
            // every probe event appended during the freeze was delivered within the bound
            long frozenFor = System.nanoTime();
            for (Map.Entry<UUID, Long> e : probeAppended.entrySet()) {
                long appendedAt = e.getValue();
                if (appendedAt < stoppedAt || appendedAt > frozenFor - BOUND.plus(READER_SLACK).toNanos()) {
                    continue;
                }
                Long deliveredAt = probeDelivered.get(e.getKey());
                assertThat(deliveredAt).as("probe event %s delivered", e.getKey()).isNotNull();
                assertThat(Duration.ofNanos(deliveredAt - appendedAt)).as("delay of probe event %s", e.getKey())
                        .isLessThanOrEqualTo(BOUND.plus(READER_SLACK));
            }

            // the worker wakes: its transaction did not commit, and its fenced writes are refused
            Files.createFile(release);
            signal(pid, "CONT");
            await("the woken worker reports its transaction").atMost(Duration.ofSeconds(30))
                    .until(() -> Files.readString(log).contains("WINDOW-END"));
            assertThat(Files.readString(log)).contains("WINDOW-END not committed");
            await("the woken worker finds its buckets lost and its checkpoint writes refused")
                    .atMost(Duration.ofSeconds(30)).until(() -> {
                        String out = Files.readString(log);
                        return frozenBuckets.stream().allMatch(b -> out.contains("lost " + b))
                                && out.contains("checkpoint not written");
                    });

            // nothing is skipped
            appending.set(false);
            appender.join(TimeUnit.SECONDS.toMillis(10));
            long events = store.categoryForward("frz", GlobalPosition.START, 2000).count();
            await("every event handled, checkpoints at the head").atMost(Duration.ofSeconds(60))
                    .until(() -> query("SELECT count(DISTINCT event_id) FROM handled") == events
                            && checkpointsAtHead());
            List<UUID> probes = store.categoryForward("probe", GlobalPosition.START, 2000)
                    .map(RecordedEvent::eventId).toList();
            await("every probe event delivered").atMost(Duration.ofSeconds(30))
                    .until(() -> probeDelivered.keySet().containsAll(probes));
        } finally {
            appending.set(false);
            if (appender != null) {
                appender.join(TimeUnit.SECONDS.toMillis(10));
            }
            if (!Files.exists(release)) {
                Files.createFile(release);
            }
            if (child.isAlive()) {
                signal(child.pid(), "CONT");
            }
            closeQuietly(childIn);
            if (survivor != null) {
                survivor.stop(Duration.ofSeconds(5));
            }
            if (probe != null) {
                probe.stop(Duration.ofSeconds(5));
            }
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly();
            }
        }
    }

    private static void closeQuietly(OutputStream out) {
        try {
            out.close();
        } catch (IOException e) {
            // the child is gone
        }
    }
}
