package dev.waymark.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import dev.waymark.store.EventStore;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The README's examples run against a real database. */
class ReadmeExamplesTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    @Test
    void the_readme_examples_work() throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE orders (id text PRIMARY KEY, shipped boolean NOT NULL DEFAULT false)");
            s.execute("INSERT INTO orders VALUES ('42', false)");
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(POSTGRES.jdbcUrl());
        config.setMaximumPoolSize(8);
        ReadmeExamples examples = new ReadmeExamples();
        try (EventStore store = examples.quickStart(config)) {
            assertThat(examples.seen).contains("history 2", "projected order-42@1", "projected order-42@2");
            assertThat(store.readStreamForward("order-42", 0, 10)).hasSize(3);
            try (Connection c = POSTGRES.dataSource().getConnection();
                    Statement s = c.createStatement();
                    var rs = s.executeQuery("SELECT shipped FROM orders WHERE id = '42'")) {
                rs.next();
                assertThat(rs.getBoolean(1)).isTrue();
            }

            var billing = examples.subscription(store);
            await().atMost(Duration.ofSeconds(15)).until(() -> examples.seen.stream()
                    .filter(s -> s.startsWith("billed ")).count() == 3);
            examples.stop(billing);

            var worker = examples.sharded(store);
            await().atMost(Duration.ofSeconds(15)).until(() -> examples.seen.stream()
                    .filter(s -> s.startsWith("billed ")).count() == 6);
            worker.stop(Duration.ofSeconds(5));

            var app = examples.messaging(store);
            await().atMost(Duration.ofSeconds(15)).until(() -> examples.seen.stream()
                    .filter(s -> s.endsWith("bytes")).count() == 3);
            assertThat(examples.stop(app)).isTrue();

            try (var engine = examples.workflows(store)) {
                await().atMost(Duration.ofSeconds(15)).until(() -> examples.approvals.containsKey("42"));
                assertThat(examples.approve(engine, examples.approvals.get("42")))
                        .isEqualTo("ch-42 approved by alice, parcel-42");
                assertThat(examples.stop(engine)).as("nothing runs any more").isTrue();
            }
        }
    }
}
