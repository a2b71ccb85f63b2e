package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MigrationsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    @Test
    void migrate_is_idempotent_and_reports_the_version() {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("idem").build()) {
            assertThat(store.migrations().pendingCount()).isEqualTo(Migrations.SCRIPTS.size());
            assertThat(store.migrations().migrate()).isEqualTo(Migrations.SCRIPTS.size());
            assertThat(store.migrations().migrate()).isZero();
            assertThat(store.migrations().currentVersion()).isEqualTo(Migrations.latestVersion());
            assertThat(store.migrations().pendingCount()).isZero();
        }
    }

    @Test
    void schemas_are_independent_stores() {
        try (EventStore a = EventStore.builder(POSTGRES.dataSource()).schema("tenant_a").build();
                EventStore b = EventStore.builder(POSTGRES.dataSource()).schema("tenant_b").build()) {
            a.migrate();
            b.migrate();
            a.append("order-1", ExpectedVersion.noStream(), events(2));
            b.append("order-1", ExpectedVersion.noStream(), events(1));
            assertThat(a.readStreamForward("order-1", 0, 10)).hasSize(2);
            assertThat(b.readStreamForward("order-1", 0, 10)).hasSize(1);
        }
    }

    @Test
    void printed_sql_applied_by_hand_with_an_unrelated_search_path_then_baselined_gives_a_working_store()
            throws SQLException {
        String sql = Migrations.sql("by_hand");
        assertThat(sql).contains("\"by_hand\".events").doesNotContain("${");
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("SET search_path TO pg_catalog");
            s.execute(sql);
            s.execute("RESET search_path");
        }
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("by_hand").build()) {
            store.migrations().baseline();
            assertThat(store.migrations().pendingCount()).isZero();
            assertThat(store.migrations().migrate()).isZero();
            AppendResult r = store.append("order-1", ExpectedVersion.noStream(), events(3));
            assertThat(r.streamVersion()).isEqualTo(3);
        }
    }

    @Test
    void version_15_detaches_the_children_that_earlier_collections_left_naming_a_deleted_parent()
            throws SQLException {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("detach").build()) {
            Flyway.configure(Migrations.class.getClassLoader()).dataSource(POSTGRES.dataSource()).schemas("detach")
                    .defaultSchema("detach").createSchemas(true).table(Migrations.HISTORY_TABLE)
                    .locations("classpath:" + Migrations.LOCATION).target("14").load().migrate();
            try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
                // a child of a collected parent (version 14 deleted the parent's row and left the
                // child naming it), and a child of a parent that still exists
                s.execute("INSERT INTO detach.workflows (name, id, status, input, parent_name, parent_id) VALUES"
                        + " ('kid', 'orphan', 'suspended', '{}', 'host', 'gone'),"
                        + " ('host', 'here', 'suspended', '{}', NULL, NULL),"
                        + " ('kid', 'attached', 'suspended', '{}', 'host', 'here')");
            }
            assertThat(store.migrations().migrate()).isEqualTo(Migrations.SCRIPTS.size() - 14);
            try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT id, coalesce(parent_name || '/' || parent_id, '-')"
                            + " FROM detach.workflows WHERE name = 'kid' ORDER BY id")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1) + " " + rs.getString(2)).isEqualTo("attached host/here");
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1) + " " + rs.getString(2)).isEqualTo("orphan -");
            }
        }
    }

    @Test
    void the_manifest_lists_every_script_on_the_classpath() {
        for (String script : Migrations.SCRIPTS) {
            assertThat(Migrations.class.getClassLoader().getResource(Migrations.LOCATION + "/" + script))
                    .as(script).isNotNull();
        }
        assertThat(Migrations.class.getClassLoader()
                        .getResource(Migrations.LOCATION + "/V" + (Migrations.SCRIPTS.size() + 1) + "__next.sql"))
                .isNull();
    }
}
