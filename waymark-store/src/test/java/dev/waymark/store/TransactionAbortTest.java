package dev.waymark.store;

import static dev.waymark.store.StoreFixture.events;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.testkit.PostgresExtension;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A transaction that PostgreSQL aborted (a statement of the work failed, and the work caught the
 * error and returned) is rolled back by COMMIT: {@code inTransaction} says so with a typed
 * exception, wakes nobody, and writes nothing. Checked on a HikariCP pool and on a plain pgjdbc
 * data source.
 */
class TransactionAbortTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    /** The kinds of data source a caller may hand the store. */
    enum Source {
        HIKARI(p -> p.dataSource()), PLAIN_PGJDBC(p -> {
            PGSimpleDataSource plain = new PGSimpleDataSource();
            plain.setURL(p.jdbcUrl());
            return plain;
        }),
        /** A wrapper (as some tracing or proxy layers are) whose connections do not unwrap to the driver's. */
        DRIVER_HIDDEN(p -> hidingDriver(p.dataSource()));

        final Function<PostgresExtension, DataSource> make;

        Source(Function<PostgresExtension, DataSource> make) {
            this.make = make;
        }
    }

    private static DataSource hidingDriver(DataSource real) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(real, method, args);
                    return result instanceof Connection c ? hiding(c) : result;
                });
    }

    private static Connection hiding(Connection real) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[]{Connection.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "isWrapperFor" -> false;
                    case "unwrap" -> throw new SQLException("not a wrapper for " + args[0]);
                    default -> invoke(real, method, args);
                });
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @BeforeAll
    static void setUp() {
        POSTGRES.execute("CREATE TABLE orders (id text PRIMARY KEY); INSERT INTO orders VALUES ('taken')");
    }

    /** A store whose wake signal moves only when this handle wakes its readers after a commit. */
    private static EventStore quietStore(Source source) {
        return EventStore.builder(source.make.apply(POSTGRES)).notifications(false)
                .fallbackPoll(Duration.ofMinutes(10)).build();
    }

    private static boolean exists(EventStore store, String stream) {
        return store.streamInfo(stream).isPresent();
    }

    @ParameterizedTest
    @EnumSource(Source.class)
    void a_work_that_catches_its_own_sql_error_and_returns_is_reported_as_rolled_back(Source source) {
        String stream = "abort-sql-" + source;
        try (EventStore store = quietStore(source)) {
            long generation = store.wakeSignal().generation();
            // before: returned "done" although COMMIT rolled the transaction back, and woke readers
            assertThatThrownBy(() -> store.inTransaction(tx -> {
                tx.append(stream, ExpectedVersion.noStream(), events(2));
                try (Statement s = tx.connection().createStatement()) {
                    s.execute("INSERT INTO orders VALUES ('taken')");
                } catch (SQLException duplicate) {
                    // swallowed: the transaction is aborted all the same
                }
                return "done";
            }))
                    .isInstanceOf(TransactionAbortedException.class)
                    .hasMessageContaining("aborted")
                    .hasMessageContaining("rolled back")
                    .hasMessageContaining("nothing was committed");
            assertThat(exists(store, stream)).isFalse();
            assertThat(store.wakeSignal().generation()).as("no reader was woken").isEqualTo(generation);
        }
    }

    @ParameterizedTest
    @EnumSource(Source.class)
    void a_work_that_catches_the_stores_own_conflict_and_returns_is_reported_with_that_conflict(Source source) {
        String taken = "abort-taken-" + source;
        String fresh = "abort-fresh-" + source;
        try (EventStore store = quietStore(source)) {
            store.append(taken, ExpectedVersion.noStream(), events(1));
            long generation = store.wakeSignal().generation();
            assertThatThrownBy(() -> store.inTransaction(tx -> {
                tx.append(fresh, ExpectedVersion.noStream(), events(1));
                try {
                    tx.append(taken, ExpectedVersion.noStream(), events(1));
                } catch (StreamAlreadyExistsException conflict) {
                    // swallowed: the failed append aborted the transaction
                }
                return List.of();
            }))
                    .isInstanceOfSatisfying(TransactionAbortedException.class, e -> {
                        assertThat(e.getCause()).isInstanceOf(StreamAlreadyExistsException.class);
                        assertThat(e.getMessage()).contains("first error").contains(taken);
                    });
            assertThat(exists(store, fresh)).isFalse();
            assertThat(store.wakeSignal().generation()).isEqualTo(generation);
        }
    }

    @ParameterizedTest
    @EnumSource(Source.class)
    void a_failure_rolled_back_to_a_savepoint_leaves_the_transaction_committable(Source source) throws SQLException {
        String stream = "abort-savepoint-" + source;
        try (EventStore store = quietStore(source)) {
            long generation = store.wakeSignal().generation();
            String result = store.inTransaction(tx -> {
                tx.append(stream, ExpectedVersion.noStream(), events(1));
                Connection c = tx.connection();
                Savepoint before = c.setSavepoint();
                try (Statement s = c.createStatement()) {
                    s.execute("INSERT INTO orders VALUES ('taken')");
                } catch (SQLException duplicate) {
                    c.rollback(before); // the application recovered properly
                }
                return "done";
            });
            assertThat(result).isEqualTo("done");
            assertThat(store.readStreamForward(stream, 0, 10)).hasSize(1);
            assertThat(store.wakeSignal().generation()).isGreaterThan(generation);
        }
    }
}
