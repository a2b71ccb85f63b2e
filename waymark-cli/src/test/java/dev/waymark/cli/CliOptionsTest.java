package dev.waymark.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.store.EventStore;
import dev.waymark.store.Migrations;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Option values: URLs, schemas, durations, and the options every command honours. */
class CliOptionsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    @Test
    void a_malformed_url_is_a_usage_error_found_before_connecting() {
        // before: exit 1, "Failed to get driver instance for jdbcUrl=..." (and a driver warning on stderr)
        for (String url : new String[]{"nonsense", "jdbc:mysql://db/app", "jdbc:postgresql://[bad",
                "postgresql://127.0.0.1:5432/postgres", "jdbc:postgresql://127.0.0.1:5432/postgres?user=%%"}) {
            CliRun run = CliRun.of("streams", "list", "--url", url);
            assertThat(run.code()).as(url + ": " + run.err()).isEqualTo(2);
            assertThat(run.err()).as(url).startsWith("--url '" + url + "' is not a PostgreSQL JDBC URL")
                    .contains("jdbc:postgresql://HOST[:PORT]/DATABASE").contains("Usage: waymark streams list")
                    .doesNotContain("WARNING");
        }
        CliRun secret = CliRun.of("streams", "list", "--url", "jdbc:postgresql://db:5432/app?password=s3cret&user=%");
        assertThat(secret.code()).isEqualTo(2);
        assertThat(secret.err()).contains("password=***").doesNotContain("s3cret");
        // a well-formed URL of a server that is not there is still "unreachable"
        assertThat(CliRun.of("streams", "list", "--url", "jdbc:postgresql://127.0.0.1:1/nowhere").code())
                .isEqualTo(WaymarkCli.UNREACHABLE);
    }

    @Test
    void a_malformed_schema_name_is_a_usage_error_found_before_connecting() {
        // before: exit 1 (as if an operation had failed)
        CliRun sql = CliRun.of("migrate", "sql", "--schema", "Bad-Name");
        assertThat(sql.code()).isEqualTo(2);
        assertThat(sql.err()).startsWith("--schema: schema must be a lower-case identifier").contains("'Bad-Name'");
        CliRun list = CliRun.of("streams", "list", "--schema", "bad name", "--url", "jdbc:postgresql://127.0.0.1:1/x");
        assertThat(list.code()).as("refused before the unreachable database: " + list.err()).isEqualTo(2);
    }

    @Test
    void workflows_collect_takes_a_zero_retention_as_the_api_does() throws Exception {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            store.migrate();
            WorkflowRegistry registry = new WorkflowRegistry().register("greet", String.class, String.class,
                    (ctx, who) -> ctx.step("greet", String.class, () -> "hello " + who));
            try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).build()) {
                engine.start("greet", "g-0", "ada", String.class).await(Duration.ofSeconds(20));
            }
        }
        // before: "'0s' is not a positive duration", exit 2
        CliRun preview = CliRun.of("workflows", "collect", "--retention", "0s", "--url", POSTGRES.jdbcUrl(), "--json");
        assertThat(preview.code()).as(preview.err()).isZero();
        assertThat(preview.json().get("retention").asText()).isEqualTo("PT0S");
        assertThat(preview.json().get("candidates")).singleElement()
                .satisfies(c -> assertThat(c.get("id").asText()).isEqualTo("g-0"));
        CliRun collect = CliRun.of("workflows", "collect", "--retention", "0s", "--force", "--url", POSTGRES.jdbcUrl(),
                "--json");
        assertThat(collect.code()).as(collect.err()).isZero();
        assertThat(collect.json().get("deleted").asInt()).isOne();
        // negative retentions stay refused, and so does a zero --timeout (a wait of nothing)
        assertThat(CliRun.of("workflows", "collect", "--retention", "-1s").code()).isEqualTo(2);
        CliRun zeroTimeout = CliRun.of("streams", "tail", "--timeout", "0s", "--url", POSTGRES.jdbcUrl());
        assertThat(zeroTimeout.code()).isEqualTo(2);
        assertThat(zeroTimeout.err()).contains("'0s' is not a positive duration");
    }

    @Test
    void migrate_sql_honours_json() throws Exception {
        // before: --json was ignored and the plain script printed
        CliRun run = CliRun.of("migrate", "sql", "--schema", "ops", "--json");
        assertThat(run.code()).as(run.err()).isZero();
        JsonNode json = run.json();
        assertThat(json.get("schema").asText()).isEqualTo("ops");
        assertThat(json.get("scripts")).extracting(JsonNode::asText).containsExactly("store/V1__event_store.sql",
                "subscription/V1__subscriptions.sql", "workflow/V1__workflows.sql");
        assertThat(json.get("sql").asText()).isEqualTo(Migrations.sql("ops"));
        assertThat(CliRun.of("migrate", "sql", "--schema", "ops").out()).isEqualTo(Migrations.sql("ops"));
    }
}
