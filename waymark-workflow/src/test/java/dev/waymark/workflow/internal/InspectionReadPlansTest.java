package dev.waymark.workflow.internal;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.OneConnection;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the remaining instance and awakeable lookups read (schema version 10), however many rows the
 * tables hold and however small they were when the session first ran them: a parent's children (all,
 * and the live ones a cancellation walks), an instance's awakeables, and a retry read the rows of
 * their own instance.
 */
class InspectionReadPlansTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int OTHERS = 20_000;
    private static final int EARLY_READS = 12; // pgjdbc prepares at the fifth execution, the server plans generically from the sixth

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void children_awakeables_and_retry_read_their_own_instances_rows_however_large_the_tables_grew()
            throws Exception {
        String schema = "\"" + store.schema() + "\"";
        int used = EARLY_READS + 1;
        POSTGRES.execute("INSERT INTO " + schema + ".workflows (name, id, status, input)"
                + " SELECT 'par', 'p' || g, 'suspended', '1' FROM generate_series(0, " + used + ") g");
        POSTGRES.execute("INSERT INTO " + schema + ".workflows (name, id, status, input, parent_name, parent_id)"
                + " SELECT 'kid', 'p' || g || '.' || k, CASE WHEN k = 0 THEN 'running' ELSE 'completed' END, '1', 'par',"
                + " 'p' || g FROM generate_series(0, " + used + ") g, generate_series(0, 1) k");
        POSTGRES.execute("INSERT INTO " + schema + ".workflow_awakeables (awakeable_id, name, id, generation, label)"
                + " SELECT gen_random_uuid(), 'par', 'p' || g, 0, 'a' FROM generate_series(0, " + used + ") g");
        POSTGRES.execute("INSERT INTO " + schema + ".workflows (name, id, status, input, failure)"
                + " SELECT 'bad', 'b' || g, 'failed', '1', 'boom' FROM generate_series(0, " + used + ") g");
        POSTGRES.execute("ANALYZE " + schema + ".workflows");
        POSTGRES.execute("ANALYZE " + schema + ".workflow_awakeables");
        String[] tables = {schema + ".workflows", schema + ".workflow_awakeables"};
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            Instances onThisConnection = new Instances(OneConnection.dataSource(c), store.schema());
            SoftAssertions softly = new SoftAssertions();
            for (int k = 0; k < used; k++) {
                if (k == EARLY_READS) { // the plans were made on small tables: now they are large
                    POSTGRES.execute("INSERT INTO " + schema + ".workflows (name, id, status, input, parent_name,"
                            + " parent_id) SELECT 'kid', 'o-' || g, 'running', '1', 'par', 'o-' || (g % 100)"
                            + " FROM generate_series(1, " + OTHERS + ") g");
                    POSTGRES.execute("INSERT INTO " + schema + ".workflows (name, id, status, input, failure)"
                            + " SELECT 'bad', 'o-' || g, 'failed', '1', 'boom' FROM generate_series(1, " + OTHERS
                            + ") g");
                    POSTGRES.execute("INSERT INTO " + schema + ".workflow_awakeables (awakeable_id, name, id,"
                            + " generation, label) SELECT gen_random_uuid(), 'par', 'o-' || (g % 100), 0, 'a'"
                            + " FROM generate_series(1, " + OTHERS + ") g");
                }
                String parent = "p" + k;
                String failed = "b" + k;
                Map<String, Supplier<Object>> reads = new LinkedHashMap<>();
                reads.put("children", () -> onThisConnection.queries().children("par", parent).size());
                reads.put("live children", () -> onThisConnection.queries().liveChildren("par", parent).size());
                reads.put("awakeables", () -> onThisConnection.awakeables().of("par", parent).size());
                reads.put("retry", () -> onThisConnection.retry("bad", failed));
                Map<String, Object> outcomes = Map.of("children", 2, "live children", 1, "awakeables", 1, "retry",
                        true);
                for (Map.Entry<String, Supplier<Object>> read : reads.entrySet()) {
                    long before = OneConnection.rowsRead(c, tables);
                    softly.assertThat(read.getValue().get()).as(read.getKey() + " of " + parent)
                            .isEqualTo(outcomes.get(read.getKey()));
                    if (k == EARLY_READS) {
                        softly.assertThat(OneConnection.rowsRead(c, tables) - before)
                                .as("rows read by " + read.getKey())
                                .isLessThan(OTHERS / 10);
                    }
                    c.commit();
                }
            }
            softly.assertAll();
        }
    }
}
