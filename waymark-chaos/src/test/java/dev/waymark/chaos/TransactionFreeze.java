package dev.waymark.chaos;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * A test-only data source wrapper of a chaos worker that holds a Waymark transaction open on
 * request, so the fault driver can stop the process (SIGSTOP) inside it. Once {@link #arm armed},
 * the first statement that writes or locks a lease row inside an open transaction (a renewal, a
 * claim, a release) is followed by the line {@code WINDOW <sql>} on standard output, and its thread
 * waits there until the release file exists. The production code has no such hook.
 */
final class TransactionFreeze {

    private final AtomicReference<Path> armed = new AtomicReference<>();

    /** Freezes the next lease transaction until {@code release} exists. */
    void arm(Path release) {
        armed.set(release);
    }

    /** {@code real}, with the hook. */
    DataSource wrap(DataSource real) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(method, real, args);
                    return method.getName().equals("getConnection") ? connection((Connection) result) : result;
                });
    }

    private Connection connection(Connection real) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[]{Connection.class},
                (proxy, method, args) -> {
                    Object result = invoke(method, real, args);
                    if (method.getName().equals("prepareStatement") && locksLeaseRows((String) args[0])) {
                        String sql = (String) args[0];
                        PreparedStatement statement = (PreparedStatement) result;
                        return Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(),
                                new Class<?>[]{PreparedStatement.class}, (p, m, a) -> {
                                    Object r = invoke(m, statement, a);
                                    if (m.getName().startsWith("execute") && !real.getAutoCommit()) {
                                        Path release = armed.getAndSet(null);
                                        if (release != null) {
                                            hold(sql, release);
                                        }
                                    }
                                    return r;
                                });
                    }
                    return result;
                });
    }

    private static void hold(String sql, Path release) {
        System.out.println("WINDOW " + sql.substring(0, Math.min(sql.length(), 60)));
        System.out.flush();
        while (!Files.exists(release)) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    /**
     * Whether {@code sql} writes or locks lease rows: an update or insert of {@code shards}, also
     * inside a {@code WITH} (the renewal is one statement whose update is a CTE), or a locking read.
     */
    private static boolean locksLeaseRows(String sql) {
        String s = sql.toLowerCase(Locale.ROOT);
        return s.contains(".shards") && (s.startsWith("update") || s.startsWith("insert") || s.contains("for update")
                || s.contains("for share") || s.contains(".shards set "));
    }

    private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
