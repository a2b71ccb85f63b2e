package dev.waymark.cli;

import dev.waymark.core.RetryPolicy;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowQuery;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What the commands print: stored JSON nested in {@code --json}, one line per row in text tables. */
class CliOutputTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final String REASON = "no price\nsecond line\twith a tab\u0007 and a bell";
    private static String url;

    @BeforeAll
    static void seed() {
        url = POSTGRES.jdbcUrl();
        try (EventStore store = EventStore.builder(POSTGRES.newDataSource(4)).build()) {
            store.append("order-1", ExpectedVersion.any(), EventData.json("Placed", "{\"sku\":\"a\",\"qty\":2}")
                    .withMetadata("{\"tenant\":\"acme\"}"));
            store.append("order-2", ExpectedVersion.any(), EventData.json("Placed", "[1,2]"));
            try (Subscription s = Subscription.builder(store, "billing", Target.category("order"))
                    .start(d -> Ack.deadLetter(DeadLetterReason.poison(REASON)))) {
                Awaitility.await().atMost(WAIT).until(() -> DeadLetters.of(store).count("billing") == 2);
            }
            try (Subscription s = Subscription.builder(store, "shipping", Target.category("order"))
                    .start(d -> Ack.deadLetter(DeadLetterReason.poison("no address"),
                            new IllegalStateException("carrier refused\nat the gate")))) {
                Awaitility.await().atMost(WAIT).until(() -> DeadLetters.of(store).count("shipping") == 2);
            }
            WorkflowRegistry registry = new WorkflowRegistry().register("doomed", String.class, String.class,
                    (ctx, in) -> {
                        throw new IllegalStateException("line one\nline two");
                    });
            try (WorkflowEngine engine = WorkflowEngine.builder(store, registry)
                    .retry(RetryPolicy.exponential(1, Duration.ofMillis(1), Duration.ofMillis(5)))
                    .build()) {
                engine.start("doomed", "d-1", "x", String.class);
                engine.start("doomed", "d-2", "y", String.class);
                Awaitility.await().atMost(WAIT).until(() -> engine.list(WorkflowQuery.builder()
                        .status(WorkflowStatus.FAILED).name("doomed").limit(10).build()).size() == 2);
            }
        }
    }

    @Test
    void streams_read_and_tail_nest_event_data_and_metadata_as_json() throws Exception {
        CliRun read = CliRun.of("streams", "read", "--stream", "order-1", "--url", url, "--json");
        assertThat(read.code()).as(read.err()).isZero();
        // before: "data": "{\"qty\": 2, \"sku\": \"a\"}", a string to parse again; no metadata at all
        JsonNode event = read.json().get(0);
        assertThat(event.get("data").isObject()).as(event.toString()).isTrue();
        assertThat(event.get("data").get("sku").asText()).isEqualTo("a");
        assertThat(event.get("metadata").get("tenant").asText()).isEqualTo("acme");

        CliRun tail = CliRun.of("streams", "tail", "--category", "order", "--from", "start", "--limit", "2", "--url",
                url, "--json");
        assertThat(tail.code()).as(tail.err()).isZero();
        List<JsonNode> lines = tail.jsonLines();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0).get("data").get("qty").asInt()).isEqualTo(2);
        assertThat(lines.get(0).get("metadata").get("tenant").asText()).isEqualTo("acme");
        assertThat(lines.get(1).get("data").isArray()).isTrue();
        assertThat(lines.get(1).get("metadata").isNull()).isTrue();
    }

    @Test
    void dead_letters_show_nests_the_reason_as_json() throws Exception {
        CliRun show = CliRun.of("dead-letters", "show", "--id", Long.toString(firstLetter()), "--url", url, "--json");
        assertThat(show.code()).as(show.err()).isZero();
        // before: "reasonJson": "{\"kind\": \"poison\", ...}", a string
        JsonNode reason = show.json().get("reasonJson");
        assertThat(reason.isObject()).as(reason.toString()).isTrue();
        assertThat(reason.get("kind").asText()).isEqualTo("poison");
        assertThat(reason.get("detail").asText()).isEqualTo(REASON);
        assertThat(show.json().get("reason").asText()).isEqualTo("poison: " + REASON);
    }

    @Test
    void dead_letters_show_prints_the_handlers_exception() throws Exception {
        long id = CliRun.of("dead-letters", "list", "--subscription", "shipping", "--url", url, "--json").json()
                .get(0).get("id").asLong();
        CliRun json = CliRun.of("dead-letters", "show", "--id", Long.toString(id), "--url", url, "--json");
        assertThat(json.code()).as(json.err()).isZero();
        JsonNode error = json.json().get("error");
        assertThat(error.get("type").asText()).isEqualTo("java.lang.IllegalStateException");
        assertThat(error.get("message").asText()).isEqualTo("carrier refused\nat the gate");

        CliRun text = CliRun.of("dead-letters", "show", "--id", Long.toString(id), "--url", url);
        assertThat(text.out().lines().filter(l -> l.startsWith("error "))).singleElement().asString()
                .endsWith("java.lang.IllegalStateException: carrier refused\\nat the gate");
        // a dead letter without an exception shows none
        CliRun none = CliRun.of("dead-letters", "show", "--id", Long.toString(firstLetter()), "--url", url, "--json");
        assertThat(none.json().get("error").isNull()).isTrue();
    }

    @Test
    void text_tables_keep_one_line_per_row_whatever_the_values_hold() throws Exception {
        CliRun letters = CliRun.of("dead-letters", "list", "--subscription", "billing", "--url", url);
        assertThat(letters.code()).as(letters.err()).isZero();
        // before: the reason's newline and tab broke each row in two
        assertThat(letters.out().lines()).hasSize(3).first().asString().startsWith("      ID");
        assertThat(letters.out()).contains("poison: no price\\nsecond line\\twith a tab\\u0007 and a bell")
                .doesNotContain("\t").doesNotContain("\u0007");

        long id = firstLetter();
        CliRun show = CliRun.of("dead-letters", "show", "--id", Long.toString(id), "--url", url);
        assertThat(show.out().lines().filter(l -> l.startsWith("reason "))).singleElement().asString()
                .endsWith("poison: no price\\nsecond line\\twith a tab\\u0007 and a bell");
        assertThat(show.out().lines()).allSatisfy(l -> assertThat(l).matches("[a-zA-Z]+ +.*"));

        CliRun workflows = CliRun.of("workflows", "list", "--url", url);
        assertThat(workflows.out().lines()).hasSize(3);
        assertThat(workflows.out()).contains("line one\\nline two");
        CliRun workflow = CliRun.of("workflows", "show", "doomed", "d-1", "--url", url);
        assertThat(workflow.out().lines().filter(l -> l.startsWith("failure "))).singleElement().asString()
                .contains("line one\\nline two");
        assertThat(workflow.out()).doesNotContain("\nline two");

        // --json carries the exact values
        CliRun json = CliRun.of("workflows", "show", "doomed", "d-1", "--url", url, "--json");
        assertThat(json.out()).contains("line one\\nline two");
    }

    /** The id of one of billing's dead letters. */
    private static long firstLetter() throws Exception {
        return CliRun.of("dead-letters", "list", "--subscription", "billing", "--url", url, "--json").json().get(0)
                .get("id").asLong();
    }
}
