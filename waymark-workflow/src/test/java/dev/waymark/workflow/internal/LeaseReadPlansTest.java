package dev.waymark.workflow.internal;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.OneConnection;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a run's lease statements read, however many instances run elsewhere and however small the
 * instance table was when the session first ran them: reading the instance (every run does at its
 * start), claiming, renewing, recording a crash and releasing read the run's own row. (Planned on a
 * small table, each read every running instance.)
 * Its own class: the rows it adds would change what the resume-pass test in
 * {@link EngineReadPlansTest} discovers.
 */
class LeaseReadPlansTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int OTHERS_RUNNING = 20_000;
    private static final int EARLY_READS = 12; // pgjdbc prepares at the fifth execution, the server plans generically from the sixth

    private static EventStore store;
    private static Instances instances;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        instances = new Instances(POSTGRES.dataSource(), store.schema());
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void claiming_renewing_recording_a_crash_and_releasing_read_the_runs_own_row_however_many_run_elsewhere()
            throws Exception {
        String schema = "\"" + store.schema() + "\"";
        int instancesUsed = EARLY_READS + 1;
        for (int k = 0; k < instancesUsed; k++) {
            instances.start("lease", "l" + k, "1", UUID.randomUUID(), null, null, Duration.ofMinutes(5));
        }
        POSTGRES.execute("ANALYZE " + schema + ".workflows");
        String[] tables = {schema + ".workflows"};
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            Instances onThisConnection = new Instances(OneConnection.dataSource(c), store.schema());
            SoftAssertions softly = new SoftAssertions();
            for (int k = 0; k < instancesUsed; k++) {
                if (k == EARLY_READS) { // the plans were made on a small table: now many instances run elsewhere
                    POSTGRES.execute(
                            "INSERT INTO " + schema + ".workflows (name, id, status, input, lease_owner, lease_epoch,"
                                    + " lease_expires_at) SELECT 'other', 'o-' || g, 'running', '1', 'elsewhere', 1,"
                                    + " now() + interval '1 hour' FROM generate_series(1, " + OTHERS_RUNNING + ") g");
                }
                String id = "l" + k;
                long[] epoch = {0};
                Map<String, Supplier<Object>> steps = new LinkedHashMap<>();
                steps.put("read the instance", () -> onThisConnection.find("lease", id).isPresent());
                steps.put("claim", () -> {
                    epoch[0] = onThisConnection.leases().claim("lease", id, "me", Duration.ofMinutes(1)).orElseThrow()
                            .epoch();
                    return true;
                });
                steps.put("renew", () -> onThisConnection.leases().renew("me", List.of(new Instances.Key("lease", id)),
                        Duration.ofMinutes(1)));
                steps.put("record a crash",
                        () -> onThisConnection.leases().recordCrash("lease", id, "boom", Duration.ZERO,
                                Duration.ZERO, epoch[0]).orElseThrow());
                steps.put("release", () -> onThisConnection.leases().release("lease", id, "me", epoch[0], true));
                Map<String, Object> outcomes = Map.of("read the instance", true, "claim", true, "renew", 1,
                        "record a crash", 1, "release", dev.waymark.workflow.status.WorkflowStatus.RUNNING);
                for (Map.Entry<String, Supplier<Object>> step : steps.entrySet()) {
                    long before = OneConnection.rowsRead(c, tables);
                    softly.assertThat(step.getValue().get()).as(step.getKey() + " of " + id)
                            .isEqualTo(outcomes.get(step.getKey()));
                    if (k == EARLY_READS) {
                        softly.assertThat(OneConnection.rowsRead(c, tables) - before)
                                .as("rows read by " + step.getKey())
                                .isLessThan(OTHERS_RUNNING / 10);
                    }
                    c.commit();
                }
            }
            softly.assertAll();
        }
    }

}
