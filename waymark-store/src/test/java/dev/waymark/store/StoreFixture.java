package dev.waymark.store;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.stream.IntStream;
import javax.sql.DataSource;

/** Shared set-up of store tests: the class's own database, already migrated. */
public final class StoreFixture {

    private StoreFixture() {}

    /**
     * A database per test class copied from a template migrated once (the schema of every module on
     * the class path, in the default schema); the store's tests cannot use waymark-test's
     * {@code WaymarkExtension.migratedPostgres()}, which depends on the store.
     */
    public static PostgresExtension migratedPostgres() {
        return PostgresExtension.migrated(Migrations.sql(EventStoreBuilder.DEFAULT_SCHEMA),
                template -> {
                    try (EventStore store = EventStore.builder(template).build()) {
                        store.migrate();
                    }
                });
    }

    static long count(DataSource dataSource, String sql) {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static void execute(DataSource dataSource, String sql) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static long eventCount(DataSource dataSource) {
        return count(dataSource, "SELECT count(*) FROM waymark.events");
    }

    static long streamCount(DataSource dataSource) {
        return count(dataSource, "SELECT count(*) FROM waymark.streams");
    }

    static EventData event(String type) {
        return EventData.json(type, "{\"n\":1}");
    }

    static List<EventData> events(int n) {
        return IntStream.range(0, n).mapToObj(i -> EventData.json("E" + i, "{\"i\":" + i + "}")).toList();
    }
}
