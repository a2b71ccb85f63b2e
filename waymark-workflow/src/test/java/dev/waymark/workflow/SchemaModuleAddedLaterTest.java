package dev.waymark.workflow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An application that used only the event store and adds workflows later migrates again and gets
 * just the workflow module's schema, recorded in its own history table; the store's is untouched.
 */
class SchemaModuleAddedLaterTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    @Test
    void migrating_again_with_the_workflow_module_added_applies_only_its_baseline() throws SQLException {
        // what an application with only waymark-store on its class path did
        Flyway.configure(EventStore.class.getClassLoader()).dataSource(POSTGRES.dataSource()).schemas("later")
                .defaultSchema("later").createSchemas(true).table("waymark_store_history")
                .locations("classpath:db/waymark/store").load().migrate();
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("later").build()) {
            store.append("order-1", ExpectedVersion.noStream(), EventData.json("Placed", "{}"));
            assertThat(store.migrations().versions()).isEqualTo(Map.of("store", "1", "workflow", ""));
            assertThat(store.migrations().pendingCount()).isEqualTo(1);
            long storeHistory = count("SELECT count(*) FROM later.waymark_store_history");

            assertThat(store.migrations().migrate()).isEqualTo(1);

            assertThat(store.migrations().currentVersion()).isEqualTo("store 1, workflow 1");
            assertThat(store.migrations().pendingCount()).isZero();
            assertThat(store.readStreamForward("order-1", 0, 10)).hasSize(1);
            assertThat(count("SELECT count(*) FROM later.waymark_store_history")).isEqualTo(storeHistory);
            assertThat(count("SELECT count(*) FROM later.waymark_workflow_history WHERE version = '1'")).isEqualTo(1);
            assertThat(count("SELECT count(*) FROM later.workflows")).isZero();
        }
    }

    private static long count(String sql) throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
