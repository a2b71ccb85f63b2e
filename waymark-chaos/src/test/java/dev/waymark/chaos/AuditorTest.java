package dev.waymark.chaos;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.testkit.PostgresExtension;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The auditor's continuous checks and its checkpoint check see planted violations (so a green chaos run means something). */
class AuditorTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static void sql(String statement) throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }

    @Test
    void planted_violations_are_reported() throws Exception {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build();
                ChaosLog log = new ChaosLog(Path.of("target", "auditor-test", "chaos.log"))) {
            store.migrate();
            Auditor auditor = new Auditor(POSTGRES.jdbcUrl(), "localhost:1", "none", 1, log);
            String pool = "'" + ChaosWorker.POOL + "'";
            sql("INSERT INTO waymark.checkpoints (subscription, member, group_size, position_tx, position_seq)"
                    + " VALUES (" + pool + ", 0, 8, 100, 5)");
            sql("INSERT INTO waymark.shards (subscription, bucket, shard_count, owner, epoch, lease_expires_at)"
                    + " VALUES (" + pool + ", 0, 8, 'a', 3, now() + interval '1 minute')");
            auditor.sample();
            assertThat(auditor.continuousViolations()).isEmpty();

            sql("UPDATE waymark.checkpoints SET position_seq = 4"); // backwards
            sql("UPDATE waymark.shards SET owner = 'b'"); // a second live owner at epoch 3
            auditor.sample();
            sql("UPDATE waymark.shards SET epoch = 2, owner = 'c'"); // epoch decreased
            auditor.sample();
            List<String> found = auditor.continuousViolations();
            assertThat(found).hasSize(3);
            assertThat(found.get(0)).contains("checkpoint of member 0 moved backwards: (100, 5) -> (100, 4)");
            assertThat(found.get(1)).contains("bucket 0 has two live owners at epoch 3: a and b");
            assertThat(found.get(2)).contains("epoch of bucket 0 decreased: 3 -> 2");

            // an event whose bucket's checkpoint is behind it is reported as skipped
            store.append(ChaosWorker.CATEGORY + "-1", ExpectedVersion.any(), List.of(EventData.json("Tick", "{}")));
            // Reads stop at the visibility horizon, which any transaction on the server (another database's
            // included) holds back for a moment: wait until the event is readable.
            await().atMost(WAIT).untilAsserted(() -> assertThat(Auditor.checkpointsAtHead(store)).singleElement()
                    .asString().contains("checkpoint none"));
        }
    }
}
