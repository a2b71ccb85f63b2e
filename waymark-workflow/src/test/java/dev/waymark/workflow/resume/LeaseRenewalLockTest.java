package dev.waymark.workflow.resume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lease renewal never waits for a row lock: it renews the instances it can lock and leaves one that
 * another transaction holds to the next renewal. Before, it locked the rows in the order of its
 * arguments and waited, so a transaction that held one of them and then wanted another the renewal
 * had locked deadlocked with it.
 */
class LeaseRenewalLockTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    @Test
    void a_renewal_skips_an_instance_locked_elsewhere_instead_of_waiting_for_it() throws SQLException {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).schema("renew_locks").build()) {
            store.migrate();
        }
        try (Connection holder = POSTGRES.dataSource().getConnection();
                Connection renewer = POSTGRES.dataSource().getConnection();
                Statement h = holder.createStatement();
                Statement r = renewer.createStatement()) {
            h.execute("INSERT INTO renew_locks.workflows (name, id, status, input, lease_owner, lease_epoch,"
                    + " lease_expires_at) VALUES ('job', 'a', 'running', '{}', 'w1', 1, now()),"
                    + " ('job', 'b', 'running', '{}', 'w1', 2, now()), ('job', 'c', 'running', '{}', 'w2', 3, now())");
            holder.setAutoCommit(false);
            h.execute("SELECT 1 FROM renew_locks.workflows WHERE name = 'job' AND id = 'b' FOR UPDATE");
            // the former renewal waited here for 'b' while holding 'a'
            r.execute("SET lock_timeout = '2s'");

            assertThat(renew(renewer, "w1", "b", "a", "c")).as("renewed: a only").isEqualTo(1);
            // the holder now takes the row the renewal locked first: no deadlock, no wait
            h.execute("SET LOCAL lock_timeout = '2s'");
            h.execute("UPDATE renew_locks.workflows SET updated_at = updated_at WHERE name = 'job' AND id = 'a'");
            holder.commit();
            try (ResultSet rs = r.executeQuery("SELECT id FROM renew_locks.workflows"
                    + " WHERE lease_expires_at > now() + interval '50 seconds' ORDER BY id")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("a");
                assertThat(rs.next()).isFalse();
            }
            assertThat(renew(renewer, "w1", "b", "a", "c")).as("the next renewal: a and b").isEqualTo(2);
        }
    }

    private static int renew(Connection c, String owner, String... ids) throws SQLException {
        try (PreparedStatement p = c.prepareStatement("SELECT renew_locks.wf_renew(?, ?, ?, 60000)")) {
            p.setString(1, owner);
            String[] names = new String[ids.length];
            java.util.Arrays.fill(names, "job");
            p.setArray(2, c.createArrayOf("text", names));
            p.setArray(3, c.createArrayOf("text", ids));
            try (ResultSet rs = p.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
