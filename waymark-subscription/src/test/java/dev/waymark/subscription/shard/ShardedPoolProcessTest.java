package dev.waymark.subscription.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamNames;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.DeadLetter;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three worker JVMs share 16 buckets of 20,000 events over 500 streams, a few of them poison. One
 * worker is killed with SIGKILL mid-run and a fourth is started. Nothing is lost, poison events end
 * as dead letters, checkpoints reach the head, ownership converges to an even split, and the killed
 * worker's buckets are processed again within leaseTtl + 2 * renewInterval.
 */
class ShardedPoolProcessTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int SHARDS = 16;
    private static final int STREAMS = 500;
    private static final int PER_STREAM = 40;
    private static final int TOTAL = STREAMS * PER_STREAM;
    private static final Duration TTL = Duration.ofSeconds(4);
    private static final Duration RENEW = Duration.ofSeconds(1);
    private static final Pattern WORKER_LINE = Pattern.compile("worker (\\S+) pid (\\d+)");

    private static EventStore store;
    private static final Set<UUID> poison = new HashSet<>();
    private final List<Process> processes = new ArrayList<>();

    @BeforeAll
    static void setUp() throws Exception {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE handled (id bigserial PRIMARY KEY, event_id uuid NOT NULL, stream text NOT NULL,"
                    + " version bigint NOT NULL, bucket int NOT NULL, epoch bigint NOT NULL, pid bigint NOT NULL,"
                    + " at timestamptz NOT NULL)");
        }
        Random random = new Random(42);
        Set<Integer> poisonStreams = new HashSet<>();
        while (poisonStreams.size() < 5) {
            poisonStreams.add(random.nextInt(STREAMS));
        }
        for (int s = 0; s < STREAMS; s++) {
            List<EventData> batch = new ArrayList<>();
            int poisonAt = poisonStreams.contains(s) ? random.nextInt(PER_STREAM) : -1;
            for (int v = 0; v < PER_STREAM; v++) {
                batch.add(EventData.json(v == poisonAt ? "Poison" : "Work", "{\"v\":" + v + "}"));
            }
            var result = store.append("pool-" + s, ExpectedVersion.noStream(), batch);
            if (poisonAt >= 0) {
                poison.add(result.eventIds().get(poisonAt));
            }
        }
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private record Worker(Process process, String id, long pid) {}

    private Worker start(String label) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        Path log = Path.of("target", "shard-worker-" + label + ".log");
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                ShardWorkerProcess.class.getName(), POSTGRES.jdbcUrl(), "pool", "pool", Integer.toString(SHARDS),
                Long.toString(TTL.toMillis()), Long.toString(RENEW.toMillis()), "8000")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        processes.add(p);
        String[] found = new String[2];
        await("worker " + label + " started").atMost(Duration.ofSeconds(60)).until(() -> {
            Matcher m = WORKER_LINE.matcher(Files.readString(log));
            if (m.find()) {
                found[0] = m.group(1);
                found[1] = m.group(2);
                return true;
            }
            return !p.isAlive();
        });
        assertThat(p.isAlive()).as("worker %s is running (see %s)", label, log).isTrue();
        return new Worker(p, found[0], Long.parseLong(found[1]));
    }

    private static long query(String sql) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static Map<String, Integer> liveOwnership() throws Exception {
        Map<String, Integer> counts = new HashMap<>();
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT owner, count(*) FROM waymark.shards WHERE subscription = 'pool'"
                        + " AND owner IS NOT NULL AND lease_expires_at > now() GROUP BY owner")) {
            while (rs.next()) {
                counts.put(rs.getString(1), rs.getInt(2));
            }
        }
        return counts;
    }

    private static boolean checkpointsAtHead() {
        Map<Integer, GlobalPosition> last = new HashMap<>();
        for (RecordedEvent e : store.categoryForward("pool", GlobalPosition.START, 2000).toList()) {
            last.put(StreamNames.member(e.streamName(), SHARDS), e.position());
        }
        for (var entry : last.entrySet()) {
            // at its last event, or past it once the bucket's cursor moved up to the horizon
            if (Checkpoints.of(store).get("pool", Partition.of(entry.getKey(), SHARDS))
                    .filter(at -> !entry.getValue().isAfter(at)).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    @Test
    void nothing_is_lost_when_a_worker_is_killed_and_another_joins() throws Exception {
        try {
            Worker w1 = start("1");
            Worker w2 = start("2");
            Worker w3 = start("3");
            await("three workers own buckets and have handled a share").atMost(Duration.ofSeconds(90))
                    .until(() -> liveOwnership().size() == 3 && query("SELECT count(*) FROM handled") >= 2000);
            Set<Integer> killedBuckets = new HashSet<>();
            try (Connection c = POSTGRES.dataSource().getConnection();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT bucket FROM waymark.shards WHERE subscription = 'pool'"
                            + " AND owner = '" + w1.id() + "'")) {
                while (rs.next()) {
                    killedBuckets.add(rs.getInt(1));
                }
            }
            w1.process().destroyForcibly(); // SIGKILL
            assertThat(w1.process().waitFor(30, TimeUnit.SECONDS)).isTrue();
            Instant killedAt = Instant
                    .ofEpochMilli(query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint"));
            assertThat(query("SELECT count(DISTINCT event_id) FROM handled")).as("killed mid-run")
                    .isLessThan(TOTAL - 5);
            assertThat(killedBuckets).isNotEmpty();
            // buckets of the killed worker that still had events to handle: these must resume in time
            Map<Integer, Long> perBucket = new HashMap<>();
            for (RecordedEvent e : store.categoryForward("pool", GlobalPosition.START, 2000).toList()) {
                if (!poison.contains(e.eventId())) {
                    perBucket.merge(StreamNames.member(e.streamName(), SHARDS), 1L, Long::sum);
                }
            }
            Set<Integer> unfinished = new HashSet<>();
            for (int bucket : killedBuckets) {
                if (query("SELECT count(DISTINCT event_id) FROM handled WHERE bucket = " + bucket) < perBucket
                        .get(bucket)) {
                    unfinished.add(bucket);
                }
            }
            assertThat(unfinished).as("the kill left work in some of the killed worker's buckets").isNotEmpty();
            Worker w4 = start("4");

            await("every event handled, poison dead-lettered, checkpoints at the head").atMost(Duration.ofSeconds(180))
                    .until(() -> query("SELECT count(DISTINCT event_id) FROM handled") == TOTAL - poison.size()
                            && DeadLetters.of(store).count("pool") == poison.size() && checkpointsAtHead());
            await("ownership converges to an even split among the three live workers").atMost(Duration.ofSeconds(60))
                    .until(() -> {
                        Map<String, Integer> owners = liveOwnership();
                        return owners.keySet().equals(Set.of(w2.id(), w3.id(), w4.id()))
                                && owners.values().stream().mapToInt(Integer::intValue).sum() == SHARDS
                                && owners.values().stream().mapToInt(Integer::intValue).max().getAsInt()
                                        - owners.values().stream().mapToInt(Integer::intValue).min().getAsInt() <= 1;
                    });

            // dead letters are exactly the poison events
            List<DeadLetter> letters = DeadLetters.of(store).list("pool", Long.MAX_VALUE, 100);
            assertThat(letters).extracting(DeadLetter::eventId).containsExactlyInAnyOrderElementsOf(poison);
            assertThat(query("SELECT count(*) FROM handled WHERE event_id IN ("
                    + String.join(",", poison.stream().map(id -> "'" + id + "'").toList()) + ")")).isZero();

            // within each reader run (worker, bucket, epoch), every stream's deliveries are in version order
            try (Connection c = POSTGRES.dataSource().getConnection();
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT count(*) FROM (SELECT version, lag(version) OVER"
                            + " (PARTITION BY pid, bucket, epoch, stream ORDER BY id) AS previous FROM handled) t"
                            + " WHERE previous IS NOT NULL AND version <= previous")) {
                rs.next();
                assertThat(rs.getLong(1)).isZero();
            }

            // the killed worker's buckets were processed again within leaseTtl + 2 * renewInterval
            Instant deadline = killedAt.plus(TTL).plus(RENEW.multipliedBy(2));
            for (int bucket : unfinished) {
                try (Connection c = POSTGRES.dataSource().getConnection();
                        Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT min(at) FILTER (WHERE pid <> " + w1.pid()
                                + " AND at > to_timestamp(" + killedAt.toEpochMilli() + " / 1000.0)),"
                                + " count(*) FILTER (WHERE pid = " + w1.pid() + "),"
                                + " max(at) FILTER (WHERE pid = " + w1.pid() + "),"
                                + " count(DISTINCT event_id) FROM handled WHERE bucket = " + bucket)) {
                    rs.next();
                    Timestamp resumed = rs.getTimestamp(1);
                    String state = "bucket " + bucket + ": killed at " + killedAt + ", handled by the killed worker "
                            + rs.getLong(2) + " (last at " + rs.getTimestamp(3) + "), distinct events " + rs.getLong(4);
                    assertThat(resumed).as("%s resumed", state).isNotNull();
                    assertThat(resumed.toInstant()).as("%s resumed in time", state).isBefore(deadline);
                }
            }
        } finally {
            for (Process p : processes) {
                p.getOutputStream().close();
            }
            for (Process p : processes) {
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
        }
    }
}
