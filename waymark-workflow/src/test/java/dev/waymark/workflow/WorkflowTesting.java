package dev.waymark.workflow;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.status.WorkflowOutcome;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Shared fixtures of the workflow tests. */
final class WorkflowTesting {

    /** How often each named side effect ran. */
    static final class Effects {
        private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

        int hit(String key) {
            return counts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        }

        int count(String key) {
            AtomicInteger n = counts.get(key);
            return n == null ? 0 : n.get();
        }
    }

    /** The crash retry of {@link #fastEngine} and {@link #fastResume}: 5 attempts, 1 ms doubling to 5 ms. */
    static final RetryPolicy RETRY = RetryPolicy.exponential(5, Duration.ofMillis(1), Duration.ofMillis(5));

    private WorkflowTesting() {}

    /**
     * An engine with fast crash retries and a 5 s lease, whose runs suspend at once (no
     * {@link WorkflowEngineBuilder#holdWaits held waits}): the tests that use it drive the durable path
     * (suspension, resume workers, replay); {@code HeldWaitTest} and the chaos runs cover holding.
     */
    static WorkflowEngineBuilder fastEngine(EventStore store, WorkflowRegistry registry) {
        return WorkflowEngine.builder(store, registry)
                .retry(RETRY)
                .leaseTtl(Duration.ofSeconds(5))
                .holdWaits(Duration.ZERO);
    }

    static ResumeOptions fastResume() {
        return ResumeOptions.builder().pollInterval(Duration.ofMillis(50)).leaseTtl(Duration.ofSeconds(5))
                .retry(RETRY).build();
    }

    /** A listener that adds every run's error (a run that ended by throwing) to {@code errors}. */
    static WorkflowListener collectingErrors(java.util.Queue<Throwable> errors) {
        return new WorkflowListener() {
            @Override
            public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error,
                    Duration elapsed) {
                if (error != null) {
                    errors.add(error);
                }
            }
        };
    }

    static long count(PostgresExtension postgres, String sql) {
        try (Connection c = postgres.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<java.util.UUID> uuids(PostgresExtension postgres, String sql) {
        try (Connection c = postgres.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            List<java.util.UUID> out = new java.util.ArrayList<>();
            while (rs.next()) {
                out.add(rs.getObject(1, java.util.UUID.class));
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static void execute(PostgresExtension postgres, String sql) {
        try (Connection c = postgres.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
