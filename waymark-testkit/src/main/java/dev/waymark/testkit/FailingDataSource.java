package dev.waymark.testkit;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * A real data source whose {@code getConnection()} throws an injected {@link Error} (an
 * {@code OutOfMemoryError}, say) whenever a condition holds; every other call goes to the real one.
 * For tests of code that must survive a failure the database cannot be made to raise.
 */
public final class FailingDataSource {

    private FailingDataSource() {}

    /**
     * {@code real}, except that {@code beforeGetConnection} runs (on the calling thread) before each
     * {@code getConnection}: a hook that changes the database between two steps of the code under test.
     */
    public static DataSource hooked(DataSource real, Runnable beforeGetConnection) {
        return failing(real, () -> {
            beforeGetConnection.run();
            return false;
        }, AssertionError::new);
    }

    /**
     * {@code real}, except that {@code getConnection} throws {@code error.get()} while
     * {@code failNow} answers true (asked on each call, on the calling thread: a condition can test
     * the thread, or count itself down to fail once).
     */
    public static DataSource failing(DataSource real, BooleanSupplier failNow, Supplier<? extends Error> error) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && failNow.getAsBoolean()) {
                        throw error.get();
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
