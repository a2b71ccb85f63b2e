package dev.waymark.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.DeadLetterReason;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.testkit.PostgresExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The operator command line against a seeded database: every command, its JSON, its errors. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WaymarkCliTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static String url;

    @BeforeAll
    static void setUp() {
        url = POSTGRES.jdbcUrl();
    }

    /** The outcome of one command. */
    record Run(int code, String out, String err) {
        JsonNode json() throws Exception {
            return WaymarkCli.JSON.readTree(out);
        }
    }

    private static Run cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = WaymarkCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    @Order(1)
    void migrate_prints_sql_without_a_database_then_applies_and_reports_status() throws Exception {
        Run sql = cli("migrate", "sql", "--schema", "ops");
        assertThat(sql.code()).isZero();
        assertThat(sql.out()).contains("\"ops\".events").contains("CREATE SCHEMA IF NOT EXISTS \"ops\"");

        Run before = cli("migrate", "status", "--url", url, "--json");
        assertThat(before.code()).isZero();
        assertThat(before.json().get("pending").asInt()).isEqualTo(3);

        Run apply = cli("migrate", "apply", "--url", url, "--json");
        assertThat(apply.code()).isZero();
        assertThat(apply.json().get("applied").asInt()).isEqualTo(3);
        assertThat(apply.json().get("version").asText()).isEqualTo("3");
        assertThat(cli("migrate", "apply", "--url", url).out()).contains("applied 0 migration(s)");
    }

    @Test
    @Order(2)
    void subscriptions_dead_letters_and_shards_of_a_seeded_store() throws Exception {
        var pool = POSTGRES.newDataSource(4);
        try (EventStore store = EventStore.builder(pool).build()) {
            store.append("order-1", ExpectedVersion.any(), EventData.json("Bad", "{}"));
            store.append("order-2", ExpectedVersion.any(), EventData.json("Good", "{}"));
            try (Subscription s = Subscription.builder(store, "billing", Target.category("order"))
                    .start(d -> d.event().type().equals("Bad") ? Ack.deadLetter(DeadLetterReason.poison("no price"))
                            : Ack.ok())) {
                Awaitility.await().atMost(Duration.ofSeconds(15))
                        .until(() -> DeadLetters.of(store).count("billing") == 1);
            }
            ShardedSubscription worker = ShardedSubscription.builder(store, "pool", Target.category("order"))
                    .shards(2).renewInterval(Duration.ofMillis(200)).leaseTtl(Duration.ofSeconds(5))
                    .start(d -> Ack.ok());
            Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> worker.ownedBuckets().size() == 2);
            Run held = cli("shards", "status", "--subscription", "pool", "--url", url, "--json");
            assertThat(held.json()).allSatisfy(b -> assertThat(b.get("state").asText()).isEqualTo("held"));
            Run releasePreview = cli("shards", "release", "--subscription", "pool", "--worker", worker.workerId(),
                    "--url", url, "--json");
            assertThat(releasePreview.json().get("buckets")).hasSize(2);
            assertThat(releasePreview.json().get("applied").asBoolean()).isFalse();
            Run released = cli("shards", "release", "--subscription", "pool", "--worker", worker.workerId(),
                    "--url", url, "--force", "--json");
            assertThat(released.json().get("buckets")).hasSize(2);
            assertThat(released.json().get("applied").asBoolean()).isTrue();
            worker.stop(Duration.ofSeconds(5));
        }

        Run status = cli("subscriptions", "status", "--url", url, "--json");
        assertThat(status.code()).isZero();
        assertThat(status.json()).anySatisfy(row -> {
            assertThat(row.get("subscription").asText()).isEqualTo("billing");
            assertThat(row.get("member").asInt()).isZero();
            assertThat(row.get("position").asText()).matches("\\d+/\\d+");
        });
        assertThat(cli("subscriptions", "status", "--url", url).out()).contains("SUBSCRIPTION").contains("billing");

        Run letters = cli("dead-letters", "list", "--subscription", "billing", "--url", url, "--json");
        assertThat(letters.code()).isZero();
        assertThat(letters.json()).hasSize(1);
        assertThat(letters.json().get(0).get("reason").asText()).isEqualTo("poison: no price");
        assertThat(letters.json().get(0).get("stream").asText()).isEqualTo("order-1");

        long letterId = letters.json().get(0).get("id").asLong();
        Run show = cli("dead-letters", "show", "--id", Long.toString(letterId), "--url", url, "--json");
        assertThat(show.code()).isZero();
        assertThat(show.json().get("reasonJson").asText()).contains("\"kind\": \"poison\"");
        assertThat(cli("dead-letters", "show", "--id", "999999", "--url", url).err())
                .contains("no dead letter with id 999999");

        Run streams = cli("streams", "list", "--category", "order", "--url", url, "--json");
        assertThat(streams.json()).extracting(n -> n.get("name").asText()).containsExactly("order-1", "order-2");
        Run read = cli("streams", "read", "--stream", "order-1", "--url", url, "--json");
        assertThat(read.json()).singleElement().satisfies(e -> assertThat(e.get("type").asText()).isEqualTo("Bad"));
        assertThat(cli("streams", "read", "--stream", "order-9", "--url", url).err())
                .contains("no stream named 'order-9'");

        Run preview = cli("dead-letters", "purge", "--subscription", "billing", "--url", url);
        assertThat(preview.out()).contains("would purge (preview; add --force) 1");
        assertThat(cli("dead-letters", "list", "--subscription", "billing", "--url", url, "--json").json()).hasSize(1);
        Run purge = cli("dead-letters", "purge", "--subscription", "billing", "--url", url, "--force", "--json");
        assertThat(purge.json().get("deadLetters").asInt()).isOne();
        assertThat(purge.json().get("applied").asBoolean()).isTrue();

        Run shards = cli("shards", "status", "--subscription", "pool", "--url", url, "--json");
        assertThat(shards.code()).isZero();
        assertThat(shards.json()).hasSize(2);
        assertThat(shards.json().get(0).get("state").asText()).isEqualTo("free"); // released on stop
        assertThat(shards.json().get(0).get("epoch").asLong()).isPositive();

        Run resetPreview = cli("subscriptions", "reset", "--subscription", "billing", "--url", url);
        assertThat(resetPreview.out()).contains("would reset (preview; add --force) 1 member(s) to 0/0");
        assertThat(cli("subscriptions", "reset", "--subscription", "billing", "--url", url, "--force").code()).isZero();
        assertThat(cli("subscriptions", "status", "--subscription", "billing", "--url", url, "--json").json()
                .get(0).get("position").asText()).isEqualTo("0/0");
    }

    @Test
    @Order(3)
    void errors_are_one_line_with_exit_codes_scripts_can_rely_on() {
        Run noUrl = cli("subscriptions", "status");
        assertThat(noUrl.code()).isEqualTo(WaymarkCli.FAILED);
        assertThat(noUrl.err().strip()).isEqualTo("waymark: no database: give --url or set WAYMARK_DATABASE_URL");

        Run unreachable = cli("subscriptions", "status", "--url", "jdbc:postgresql://127.0.0.1:1/nowhere");
        assertThat(unreachable.code()).isEqualTo(WaymarkCli.UNREACHABLE);
        assertThat(unreachable.err()).startsWith("waymark: cannot connect to the database").doesNotContain("\tat ");
        assertThat(unreachable.err().lines().count()).isOne();

        Run noSchema = cli("subscriptions", "status", "--url", url, "--schema", "missing");
        assertThat(noSchema.code()).isEqualTo(WaymarkCli.NO_SCHEMA);
        assertThat(noSchema.err()).contains("\"missing\"");

        Run badSchema = cli("migrate", "sql", "--schema", "Bad-Name");
        assertThat(badSchema.code()).isEqualTo(WaymarkCli.FAILED);
        assertThat(badSchema.err()).contains("'Bad-Name'");

        Run unknownPool = cli("shards", "status", "--subscription", "nope", "--url", url);
        assertThat(unknownPool.code()).isEqualTo(WaymarkCli.FAILED);
        assertThat(unknownPool.err()).contains("no sharded subscription named 'nope'");

        Run usage = cli("dead-letters", "list");
        assertThat(usage.code()).isEqualTo(2);
        assertThat(usage.err()).contains("--subscription");

        Run verbose = cli("subscriptions", "status", "--url", url, "--schema", "missing", "--verbose");
        assertThat(verbose.err()).contains("\tat ");
    }
}
