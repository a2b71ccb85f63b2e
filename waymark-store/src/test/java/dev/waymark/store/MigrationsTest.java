package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
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
            assertThat(store.migrations().currentVersion()).isEqualTo(Integer.toString(Migrations.SCRIPTS.size()));
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
