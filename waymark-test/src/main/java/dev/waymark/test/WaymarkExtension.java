package dev.waymark.test;

import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.store.EventStoreBuilder;
import dev.waymark.store.Migrations;
import dev.waymark.testkit.KafkaExtension;
import dev.waymark.testkit.PostgresExtension;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class a migrated Waymark store of its own, a {@link TestClock} and, on request, the
 * in-process Kafka broker. Register it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final WaymarkExtension WAYMARK = new WaymarkExtension();
 *
 * @Test
 * void ships_after_the_cooling_off_period() {
 *     WorkflowEngine engine = WorkflowEngine.builder(WAYMARK.store(), registry).build();
 *     ...
 *     WAYMARK.clock().advance(Duration.ofDays(3));
 * }
 * }</pre>
 *
 * <p><b>Database.</b> Each test class gets its own PostgreSQL database (on the server named by
 * {@code WAYMARK_TEST_DATABASE_URL}, else an embedded one; see the testkit's {@code PostgresServer}),
 * copied from a template that holds the schema of every Waymark module on the class path, in the
 * default schema {@value EventStoreBuilder#DEFAULT_SCHEMA}. The template is migrated once per
 * version of the migration scripts and kept on the server, so a test class starts on a migrated
 * schema without running a migration. The database is dropped after the class.
 *
 * <p><b>Time.</b> {@link #dataSource()} and {@link #store()} run on connections that carry the
 * {@link #clock()}'s offset; components built on them (subscriptions, workflow engines, resume
 * workers) see time move when the test advances the clock, and those built on the extension's
 * stores ({@link #store()}, {@link #newStore}) are woken by the move, so that what came due runs at
 * once rather than at their next poll.
 */
public final class WaymarkExtension implements BeforeAllCallback, AfterAllCallback {

    private final PostgresExtension postgres = migratedPostgres();
    private final KafkaExtension kafka;
    private final TestClock clock = new TestClock();
    private final List<EventStore> stores = new ArrayList<>();
    private DataSource dataSource;
    private EventStore store;

    /** An extension with PostgreSQL and a test clock, without Kafka. */
    public WaymarkExtension() {
        this(null);
    }

    private WaymarkExtension(KafkaExtension kafka) {
        this.kafka = kafka;
        // What came due with the move runs now, not at the next poll: resume workers and readers
        // on these stores pass on the store's wake signal.
        clock.onAdvance(this::wakeStores);
    }

    private void wakeStores() {
        synchronized (stores) {
            stores.forEach(s -> StoreInternals.of(s).signalAppended());
        }
    }

    /**
     * An extension that also gives the class the JVM's in-process Kafka broker and a topic namespace
     * of its own ({@link #kafka()}). The test's class path must hold the broker's dependencies, as
     * for the testkit's {@code KafkaExtension}.
     */
    public static WaymarkExtension withKafka() {
        return new WaymarkExtension(new KafkaExtension());
    }

    /**
     * A bare database extension (no store handle, no clock) whose databases are copies of the
     * migrated Waymark template: for tests that build their own stores on {@code dataSource()}.
     */
    public static PostgresExtension migratedPostgres() {
        // Keyed by the text of every migration on the class path: a changed script is a new template.
        // The store's own tests key their template the same way (StoreFixture), so they share it.
        return PostgresExtension.migrated(Migrations.sql(EventStoreBuilder.DEFAULT_SCHEMA),
                WaymarkExtension::migrate);
    }

    private static void migrate(DataSource template) {
        try (EventStore store = EventStore.builder(template).build()) {
            store.migrate();
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        postgres.beforeAll(context);
        dataSource = clock.dataSource(postgres.dataSource());
        if (kafka != null) {
            kafka.beforeAll(context);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        synchronized (stores) {
            stores.forEach(EventStore::close);
            stores.clear();
            store = null;
        }
        try {
            if (kafka != null) {
                kafka.afterAll(context);
            }
        } finally {
            postgres.afterAll(context);
        }
    }

    /** The class's data source (pooled), whose connections carry the test clock's offset. */
    public DataSource dataSource() {
        if (dataSource == null) {
            throw new IllegalStateException("WaymarkExtension is not started: register it on a static field"
                    + " with @RegisterExtension");
        }
        return dataSource;
    }

    /** The class's store: one handle on {@link #dataSource()}, created on first use and closed after the class. */
    public EventStore store() {
        synchronized (stores) {
            if (store == null) {
                store = newStore(storeBuilder());
            }
            return store;
        }
    }

    /**
     * A builder of a store on {@link #dataSource()} using the test clock for event timestamps; pass
     * it to {@link #newStore} to have the handle closed after the class.
     */
    public EventStoreBuilder storeBuilder() {
        return EventStore.builder(dataSource()).clock(clock);
    }

    /** Builds {@code builder}'s store and closes it after the class. */
    public EventStore newStore(EventStoreBuilder builder) {
        EventStore built = builder.build();
        synchronized (stores) {
            stores.add(built);
        }
        return built;
    }

    /** The class's test clock. */
    public TestClock clock() {
        return clock;
    }

    /** The class's database, for a second pool or raw SQL. */
    public PostgresExtension postgres() {
        return postgres;
    }

    /**
     * The class's Kafka topics on the in-process broker.
     *
     * @throws IllegalStateException unless the extension was created by {@link #withKafka()}
     */
    public KafkaExtension kafka() {
        if (kafka == null) {
            throw new IllegalStateException(
                    "this WaymarkExtension has no Kafka: create it with WaymarkExtension.withKafka()");
        }
        return kafka;
    }
}
