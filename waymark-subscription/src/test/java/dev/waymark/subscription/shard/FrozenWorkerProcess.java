package dev.waymark.subscription.shard;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * One worker of a sharded pool in its own JVM, for {@link FrozenWorkerTest}, whose data source
 * can hold a Waymark transaction open on request (a test-only hook: the production code has none).
 * Once armed (a line {@code arm} on standard input), the first statement that writes or locks a
 * lease row inside an open transaction (the fence of a checkpoint transaction, a renewal, a
 * claim) is followed by the line {@code WINDOW <sql>}, and the thread waits there until the file
 * {@code release} exists: the parent stops the process with SIGSTOP inside that window. When the
 * thread goes on, the line {@code WINDOW-END} says whether the transaction could still commit.
 * Handled events go to the table {@code handled}; listener events are printed.
 * Arguments: JDBC URL, subscription, category, shards, lease TTL ms, renew ms, internal transaction
 * timeout ms, release file.
 */
public final class FrozenWorkerProcess {

    private FrozenWorkerProcess() {}

    /** Runs the worker until its standard input closes. */
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setMaximumPoolSize(10);
        Duration bound = Duration.ofMillis(Long.parseLong(args[6]));
        Path release = Path.of(args[7]);
        AtomicBoolean armed = new AtomicBoolean();
        try (HikariDataSource pool = new HikariDataSource(config);
                EventStore store = EventStore.builder(hooked(pool, armed, release))
                        .internalTransactionTimeout(bound).build()) {
            ShardedSubscription worker = ShardedSubscription.builder(store, args[1], Target.category(args[2]))
                    .shards(Integer.parseInt(args[3]))
                    .leaseTtl(Duration.ofMillis(Long.parseLong(args[4])))
                    .renewInterval(Duration.ofMillis(Long.parseLong(args[5])))
                    .retry(RetryPolicy.fixed(5, Duration.ZERO))
                    .listener(new ShardListener() {
                        @Override
                        public void claimed(String workerId, int bucket, long epoch) {
                            say("claimed " + bucket + " " + epoch);
                        }

                        @Override
                        public void lost(String workerId, int bucket) {
                            say("lost " + bucket);
                        }

                        @Override
                        public void readerDied(String workerId, int bucket, Throwable cause) {
                            say("died " + bucket + " " + cause);
                        }
                    })
                    .start(d -> {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // the handler's work
                        try (Connection c = pool.getConnection();
                                PreparedStatement p = c.prepareStatement("INSERT INTO handled (event_id, bucket,"
                                        + " epoch, worker) VALUES (?, ?, ?, ?)")) {
                            p.setObject(1, d.event().eventId());
                            p.setInt(2, d.bucket());
                            p.setLong(3, d.epoch());
                            p.setString(4, "child");
                            p.executeUpdate();
                        }
                        return Ack.ok();
                    });
            say("worker " + worker.workerId() + " pid " + ProcessHandle.current().pid());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("arm")) {
                    armed.set(true);
                    say("armed");
                }
            }
            worker.stop(Duration.ofSeconds(5));
        }
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Whether {@code sql} writes or locks a lease row (and so holds a transaction id too). */
    private static boolean locksLeaseRows(String sql) {
        String s = sql.toLowerCase(Locale.ROOT);
        boolean writes = s.contains("for share") || s.contains("for update") || s.startsWith("update")
                || s.startsWith("insert") || s.startsWith("with");
        return s.contains(".shards") && writes;
    }

    private static DataSource hooked(DataSource real, AtomicBoolean armed, Path release) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[]{DataSource.class}, (proxy, method, args) -> {
                    Object result = invoke(method, real, args);
                    return method.getName().equals("getConnection")
                            ? connection((Connection) result, armed, release)
                            : result;
                });
    }

    private static Connection connection(Connection real, AtomicBoolean armed, Path release) {
        AtomicBoolean windowOpen = new AtomicBoolean();
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[]{Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("commit") && windowOpen.getAndSet(false)) {
                        try {
                            real.commit();
                            say("WINDOW-END committed");
                            return null;
                        } catch (SQLException e) {
                            say("WINDOW-END not committed: " + e.getSQLState() + " " + e.getMessage());
                            throw e;
                        }
                    }
                    if (method.getName().equals("rollback") && windowOpen.getAndSet(false)) {
                        say("WINDOW-END not committed: rolled back after a failed statement");
                    }
                    Object result = invoke(method, real, args);
                    if (method.getName().equals("prepareStatement") && args.length >= 1
                            && locksLeaseRows((String) args[0])) {
                        String sql = (String) args[0];
                        PreparedStatement statement = (PreparedStatement) result;
                        return Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(),
                                new Class<?>[]{PreparedStatement.class}, (p, m, a) -> {
                                    Object r = invoke(m, statement, a);
                                    if (m.getName().startsWith("execute") && !real.getAutoCommit()
                                            && armed.compareAndSet(true, false)) {
                                        windowOpen.set(true);
                                        say("WINDOW " + sql.substring(0, Math.min(sql.length(), 80)));
                                        while (!Files.exists(release)) {
                                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                                        }
                                    }
                                    return r;
                                });
                    }
                    return result;
                });
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
