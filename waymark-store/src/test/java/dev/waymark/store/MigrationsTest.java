package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.plumbing.SchemaModule;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class MigrationsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    @Test
    void migrate_is_idempotent_and_reports_the_version_of_each_module() throws SQLException {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("idem").build()) {
            assertThat(store.migrations().pendingCount()).isEqualTo(Migrations.scripts().size());
            assertThat(store.migrations().currentVersion()).isEmpty();
            assertThat(store.migrations().migrate()).isEqualTo(Migrations.scripts().size());
            assertThat(store.migrations().migrate()).isZero();
            // only waymark-store is on this module's class path
            assertThat(store.migrations().currentVersion()).isEqualTo("store 1");
            assertThat(store.migrations().versions()).isEqualTo(Map.of("store", "1"));
            assertThat(store.migrations().pendingCount()).isZero();
            assertThat(tables("idem")).contains("waymark_store_history").doesNotContain("waymark_schema_history");
        }
    }

    @Test
    void the_store_module_is_found_on_the_class_path_with_its_own_location_and_history() {
        List<SchemaModule> modules = Migrations.modules();
        assertThat(modules).extracting(SchemaModule::name).containsExactly("store");
        assertThat(modules.get(0).location()).isEqualTo("db/waymark/store");
        assertThat(modules.get(0).historyTable()).isEqualTo("waymark_store_history");
        assertThat(Migrations.scripts()).containsExactly("store/V1__event_store.sql");
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
        assertThat(sql).contains("\"by_hand\".events").contains("-- store/V1__event_store.sql").doesNotContain("${");
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("SET search_path TO pg_catalog");
            s.execute(sql);
            s.execute("RESET search_path");
        }
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("by_hand").build()) {
            store.migrations().baseline();
            assertThat(store.migrations().pendingCount()).isZero();
            assertThat(store.migrations().currentVersion()).isEqualTo("store 1");
            assertThat(store.migrations().migrate()).isZero();
            AppendResult r = store.append("order-1", ExpectedVersion.noStream(), events(3));
            assertThat(r.streamVersion()).isEqualTo(3);
        }
    }

    @Test
    void a_schema_with_the_history_of_a_development_build_is_refused_and_left_unchanged() throws SQLException {
        // what a development build left: its objects and one history table at version 19
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(Migrations.sql("legacy"));
        }
        Flyway.configure(Migrations.class.getClassLoader()).dataSource(POSTGRES.dataSource()).schemas("legacy")
                .defaultSchema("legacy").table(Migrations.LEGACY_HISTORY_TABLE).locations("classpath:db/waymark/store")
                .baselineVersion("19").load().baseline();
        List<String> before = tables("legacy");
        assertThat(before).contains(Migrations.LEGACY_HISTORY_TABLE, "events");

        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("legacy").build()) {
            Migrations migrations = store.migrations();
            assertThatThrownBy(migrations::migrate).isInstanceOf(StoreException.class)
                    .hasMessageContaining("schema \"legacy\" was migrated by a development build")
                    .hasMessageContaining("\"legacy\".waymark_schema_history")
                    .hasMessageContaining("no upgrade path")
                    .hasMessageContaining("DROP SCHEMA \"legacy\" CASCADE");
            assertThatThrownBy(migrations::baseline).hasMessageContaining("development build");
            assertThatThrownBy(migrations::pendingCount).hasMessageContaining("development build");
            assertThatThrownBy(migrations::currentVersion).hasMessageContaining("development build");
        }
        assertThat(tables("legacy")).isEqualTo(before);

        // the remedy the message names works
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA legacy CASCADE");
        }
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("legacy").build()) {
            assertThat(store.migrations().migrate()).isEqualTo(Migrations.scripts().size());
        }
    }

    @Test
    void the_manifest_of_each_module_lists_every_script_on_the_class_path() {
        for (SchemaModule m : Migrations.modules()) {
            for (String script : m.scripts()) {
                assertThat(m.read(script)).as(m.name() + "/" + script).contains("${flyway:defaultSchema}");
            }
            assertThat(m.getClass().getResource(
                    "/" + m.location() + "/V" + (Integer.parseInt(m.latestVersion()) + 1) + "__next.sql"))
                    .isNull();
        }
    }

    private static List<String> tables(String schema) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT relname FROM pg_class WHERE relnamespace = '"
                        + schema + "'::regnamespace ORDER BY 1")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }
}
