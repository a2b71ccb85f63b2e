package dev.waymark.cli;

import dev.waymark.core.RetryPolicy;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.Delivery;
import dev.waymark.subscription.EventHandler;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.SubscriptionLag;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.awakeable.AwakeableFailedException;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.status.WorkflowStatus;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator command line against a seeded database: every command, its JSON, its errors. The
 * default schema is migrated once; each test seeds its own streams, subscriptions and workflows
 * under names of its own, so the tests run in any order and alone.
 */
class WaymarkCliTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static String url;

    @BeforeAll
    static void setUp() {
        url = POSTGRES.jdbcUrl();
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            store.migrate();
        }
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
    void migrate_prints_sql_without_a_database_then_applies_and_reports_status() throws Exception {
        Run sql = cli("migrate", "sql", "--schema", "ops");
        assertThat(sql.code()).isZero();
        assertThat(sql.out()).contains("\"ops\".events").contains("CREATE SCHEMA IF NOT EXISTS \"ops\"");

        // a schema of this test's own: the default one is migrated before every test
        Run before = cli("migrate", "status", "--url", url, "--schema", "cli_migrate", "--json");
        assertThat(before.code()).as(before.err()).isZero();
        // one baseline per module: store, subscription, workflow, each with its own history table
        int migrations = dev.waymark.store.Migrations.scripts().size();
        assertThat(migrations).isEqualTo(3);
        assertThat(before.json().get("pending").asInt()).isEqualTo(migrations);
        assertThat(before.json().get("version").asText()).isEmpty();

        Run apply = cli("migrate", "apply", "--url", url, "--schema", "cli_migrate", "--json");
        assertThat(apply.code()).isZero();
        assertThat(apply.json().get("applied").asInt()).isEqualTo(migrations);
        assertThat(apply.json().get("version").asText()).isEqualTo("store 1, subscription 1, workflow 1");
        assertThat(apply.json().get("versions").toString())
                .isEqualTo("{\"store\":\"1\",\"subscription\":\"1\",\"workflow\":\"1\"}");
        Run after = cli("migrate", "status", "--url", url, "--schema", "cli_migrate");
        assertThat(after.out()).contains("version store 1, subscription 1, workflow 1, 0 pending");
        assertThat(cli("migrate", "apply", "--url", url, "--schema", "cli_migrate").out())
                .contains("applied 0 migration(s)");
    }

    @Test
    void subscriptions_dead_letters_and_shards_of_a_seeded_store() throws Exception {
        var pool = POSTGRES.newDataSource(4);
        try (EventStore store = EventStore.builder(pool).build()) {
            store.append("order-1", ExpectedVersion.any(), EventData.json("Bad", "{}"));
            store.append("order-2", ExpectedVersion.any(), EventData.json("Good", "{}"));
            try (Subscription s = Subscription.builder(store, "billing", Target.category("order"))
                    .start(d -> d.event().type().equals("Bad")
                            ? Ack.deadLetter(DeadLetterReason.poison("no price"))
                            : Ack.ok())) {
                Awaitility.await().atMost(Duration.ofSeconds(15))
                        .until(() -> DeadLetters.of(store).count("billing") == 1);
            }
            ShardedSubscription worker = ShardedSubscription.builder(store, "pool", Target.category("order"))
                    .shards(2).renewInterval(Duration.ofMillis(200)).leaseTtl(Duration.ofSeconds(5))
                    .start(d -> Ack.ok());
            Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> worker.ownedBuckets().size() == 2);
            Run held = cli("shards", "status", "--subscription", "pool", "--url", url, "--json");
            assertThat(held.json()).hasSize(2).allSatisfy(b -> assertThat(b.get("state").asText()).isEqualTo("held"));
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
        assertThat(show.json().get("reasonJson").get("kind").asText()).isEqualTo("poison");
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
    void workflows_list_show_cancel_retry_and_settle_awakeables() throws Exception {
        var pool = POSTGRES.newDataSource(4);
        try (EventStore store = EventStore.builder(pool).build()) {
            store.migrate();
            WorkflowRegistry registry = new WorkflowRegistry()
                    .register("greet", String.class, String.class,
                            (ctx, who) -> ctx.step("greet", String.class, () -> "hello " + who))
                    .register("approval", String.class, String.class, (ctx, in) -> {
                        try {
                            return "approved by " + ctx.awakeable("decision", String.class).await();
                        } catch (AwakeableFailedException e) {
                            return "rejected: " + e.reason();
                        }
                    })
                    .register("doomed", String.class, String.class, (ctx, in) -> {
                        throw new IllegalStateException("warehouse " + in + " is on fire");
                    })
                    .register("napper", String.class, String.class, (ctx, in) -> {
                        ctx.sleep("nap", Duration.ofHours(1));
                        return "rested";
                    })
                    .register("parent", String.class, String.class, (ctx, in) -> ctx
                            .child("approve", "approval", ctx.workflowId() + ".child", in, String.class).await());
            // no held waits: the commands below inspect suspended instances
            try (WorkflowEngine engine = WorkflowEngine.builder(store, registry)
                    .retry(RetryPolicy.exponential(1, Duration.ofMillis(1), Duration.ofMillis(5)))
                    .holdWaits(Duration.ZERO).build()) {
                assertThat(engine.start("greet", "g-1", "ada", String.class).await(WAIT)).isEqualTo("hello ada");
                for (String[] k : new String[][]{{"approval", "a-1"}, {"approval", "a-2"}, {"napper", "n-1"},
                        {"parent", "p-1"}}) {
                    engine.start(k[0], k[1], "x", String.class);
                }
                engine.start("doomed", "d-1", "north", String.class);
                Awaitility.await().atMost(WAIT).until(() -> status(engine, "approval", "a-1") == SUSPENDED
                        && status(engine, "approval", "a-2") == SUSPENDED
                        && status(engine, "napper", "n-1") == SUSPENDED
                        && status(engine, "approval", "p-1.child") == SUSPENDED
                        && status(engine, "parent", "p-1") == SUSPENDED
                        && status(engine, "doomed", "d-1") == WorkflowStatus.FAILED);

                listsAndShows();
                cancels();
                retries();
                settlesAwakeables();
                collects();

                // the awakeable settled by the CLI woke a-1; any engine now runs it to its end
                assertThat(engine.runNow("approval", "a-1")).isTrue();
                assertThat(engine.handle("approval", "a-1", String.class).await(WAIT)).isEqualTo("approved by alice");
                assertThat(engine.runNow("approval", "a-2")).isTrue();
                assertThat(engine.handle("approval", "a-2", String.class).await(WAIT)).isEqualTo("rejected: no budget");
            }
        }
    }

    private static final WorkflowStatus SUSPENDED = WorkflowStatus.SUSPENDED;

    private static WorkflowStatus status(WorkflowEngine engine, String name, String id) {
        return engine.describe(name, id).map(d -> d.info().status()).orElse(null);
    }

    private static JsonNode show(String name, String id) throws Exception {
        Run show = cli("workflows", "show", name, id, "--url", url, "--json");
        assertThat(show.code()).as(show.err()).isZero();
        return show.json();
    }

    private static String awakeableOf(String name, String id) throws Exception {
        return show(name, id).get("awakeables").get(0).get("id").asText();
    }

    private void listsAndShows() throws Exception {
        Run all = cli("workflows", "list", "--url", url, "--json");
        assertThat(all.code()).as(all.err()).isZero();
        assertThat(all.json()).extracting(n -> n.get("name").asText() + "/" + n.get("id").asText())
                .containsExactly("approval/a-1", "approval/a-2", "approval/p-1.child", "doomed/d-1", "greet/g-1",
                        "napper/n-1", "parent/p-1");
        Run failed = cli("workflows", "list", "--status", "failed", "--url", url, "--json");
        assertThat(failed.json()).singleElement().satisfies(w -> {
            assertThat(w.get("id").asText()).isEqualTo("d-1");
            assertThat(w.get("status").asText()).isEqualTo("failed");
            assertThat(w.get("attempts").asInt()).isOne();
            assertThat(w.get("failure").asText()).contains("warehouse north is on fire");
        });
        Run page = cli("workflows", "list", "--name", "approval", "--after", "approval/a-2", "--url", url, "--json");
        assertThat(page.json()).extracting(n -> n.get("id").asText()).containsExactly("p-1.child");
        Run text = cli("workflows", "list", "--limit", "2", "--url", url);
        assertThat(text.out()).contains("WORKFLOW").contains("approval/a-1").contains("suspended")
                .contains("(more: --after approval/a-2)").doesNotContain("greet/g-1");
        // exactly as many as the limit: no hint (before: "(more: --after ...)" leading to an empty page)
        assertThat(cli("workflows", "list", "--name", "approval", "--after", "approval/a-2", "--limit", "1",
                "--url", url).out()).contains("p-1.child").doesNotContain("(more:");

        JsonNode a1 = show("approval", "a-1");
        assertThat(a1.get("workflow").get("status").asText()).isEqualTo("suspended");
        assertThat(a1.get("input").asText()).isEqualTo("x");
        assertThat(a1.get("journal")).extracting(e -> e.get("type").asText()).contains("WorkflowStarted");
        assertThat(a1.get("awakeables")).singleElement().satisfies(a -> {
            assertThat(a.get("label").asText()).isEqualTo("decision");
            assertThat(a.get("status").asText()).isEqualTo("pending");
            assertThat(a1.get("workflow").get("waitingOn").asText()).contains(a.get("id").asText());
        });
        JsonNode g1 = show("greet", "g-1");
        assertThat(g1.get("result").asText()).isEqualTo("hello ada");
        assertThat(g1.get("journal")).extracting(e -> e.get("step").asText()).contains("greet");
        JsonNode n1 = show("napper", "n-1");
        assertThat(n1.get("workflow").get("wakeAfter").asText()).isNotEmpty();
        JsonNode p1 = show("parent", "p-1");
        assertThat(p1.get("children")).singleElement().satisfies(c -> {
            assertThat(c.get("name").asText() + "/" + c.get("id").asText()).isEqualTo("approval/p-1.child");
            assertThat(c.get("status").asText()).isEqualTo("suspended");
        });
        assertThat(show("approval", "p-1.child").get("workflow").get("parentId").asText()).isEqualTo("p-1");
        Run napText = cli("workflows", "show", "napper", "n-1", "--url", url);
        assertThat(napText.out()).contains("status        suspended").contains("wake after    20")
                .contains("journal (generation 0)").contains("awakeables").contains("children");

        Run unknown = cli("workflows", "show", "greet", "nope", "--url", url);
        assertThat(unknown.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(unknown.err().strip()).isEqualTo("waymark: no workflow 'greet/nope'");
        Run badStatus = cli("workflows", "list", "--status", "sleeping", "--url", url);
        assertThat(badStatus.code()).isEqualTo(2);
        assertThat(badStatus.err()).contains("'sleeping' is not a workflow status");
        assertThat(cli("workflows", "list", "--after", "a-1", "--url", url).code()).isEqualTo(2);
        assertThat(cli("workflows", "show", "greet", "--url", url).code()).isEqualTo(2);
    }

    private void cancels() throws Exception {
        Run preview = cli("workflows", "cancel", "parent", "p-1", "--url", url);
        assertThat(preview.code()).isZero();
        assertThat(preview.out()).contains("would cancel (preview; add --force)")
                .contains("approval/p-1.child (suspended)");
        Run previewJson = cli("workflows", "cancel", "parent", "p-1", "--url", url, "--json");
        assertThat(previewJson.json().get("applied").asBoolean()).isFalse();
        assertThat(previewJson.json().get("liveChildren")).singleElement()
                .satisfies(c -> assertThat(c.get("id").asText()).isEqualTo("p-1.child"));
        assertThat(show("parent", "p-1").get("workflow").get("status").asText()).isEqualTo("suspended");

        Run cancel = cli("workflows", "cancel", "parent", "p-1", "--force", "--url", url, "--json");
        assertThat(cancel.code()).isZero();
        assertThat(cancel.json().get("outcome").asText()).isEqualTo("CANCELLED");
        assertThat(cancel.json().get("applied").asBoolean()).isTrue();
        assertThat(cancel.json().get("liveChildren")).hasSize(1);
        assertThat(show("parent", "p-1").get("workflow").get("status").asText()).isEqualTo("cancelled");
        assertThat(show("approval", "p-1.child").get("workflow").get("status").asText()).isEqualTo("cancelled");

        Run again = cli("workflows", "cancel", "parent", "p-1", "--force", "--url", url);
        assertThat(again.code()).isZero();
        assertThat(again.out()).contains("nothing changed (ALREADY_CANCELLED)");
        assertThat(cli("workflows", "cancel", "greet", "g-1", "--url", url).out())
                .contains("greet/g-1 is completed: cancel would change nothing");
        Run unknown = cli("workflows", "cancel", "greet", "nope", "--force", "--url", url);
        assertThat(unknown.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(unknown.err().strip()).isEqualTo("waymark: no workflow 'greet/nope'");
        Run badName = cli("workflows", "cancel", "no-such-name!", "x", "--url", url);
        assertThat(badName.code()).isEqualTo(WaymarkCli.FAILED);
        assertThat(badName.err().lines().count()).isOne();
    }

    private void retries() throws Exception {
        Run preview = cli("workflows", "retry", "doomed", "d-1", "--url", url);
        assertThat(preview.code()).isZero();
        assertThat(preview.out()).contains("would retry (preview; add --force)").contains("warehouse north is on fire");
        assertThat(show("doomed", "d-1").get("workflow").get("status").asText()).isEqualTo("failed");

        Run retry = cli("workflows", "retry", "doomed", "d-1", "--force", "--url", url, "--json");
        assertThat(retry.code()).isZero();
        assertThat(retry.json().get("outcome").asText()).isEqualTo("RETRIED");
        // the CLI's client runs nothing: the revived workflow waits for an engine or resume worker
        assertThat(show("doomed", "d-1").get("workflow").get("status").asText()).isEqualTo("running");

        Run notFailed = cli("workflows", "retry", "doomed", "d-1", "--force", "--url", url, "--json");
        assertThat(notFailed.code()).isZero();
        assertThat(notFailed.json().get("outcome").asText()).isEqualTo("NOT_FAILED");
        assertThat(cli("workflows", "retry", "greet", "g-1", "--url", url).out())
                .contains("greet/g-1 is completed, not failed: retry would change nothing (NOT_FAILED)");
        Run unknown = cli("workflows", "retry", "doomed", "nope", "--force", "--url", url);
        assertThat(unknown.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(unknown.err().strip()).isEqualTo("waymark: no workflow 'doomed/nope'");
    }

    private void collects() throws Exception {
        POSTGRES.execute("UPDATE waymark.workflows SET completed_at = now() - interval '2 hours'"
                + " WHERE name = 'greet' AND id = 'g-1'");
        Run preview = cli("workflows", "collect", "--retention", "1h", "--url", url);
        assertThat(preview.code()).as(preview.err()).isZero();
        assertThat(preview.out()).contains("1 instance(s) would be deleted (preview; add --force)")
                .contains("greet/g-1  completed  finished ");
        assertThat(cli("workflows", "show", "greet", "g-1", "--url", url).code()).isZero();
        assertThat(cli("workflows", "collect", "--retention", "soon", "--url", url).code()).isEqualTo(2);

        Run collect = cli("workflows", "collect", "--retention", "1h", "--force", "--url", url, "--json");
        assertThat(collect.code()).as(collect.err()).isZero();
        assertThat(collect.json().get("deleted").asInt()).isEqualTo(1);
        assertThat(cli("workflows", "show", "greet", "g-1", "--url", url).code()).isEqualTo(WaymarkCli.NOT_FOUND);
    }

    private void settlesAwakeables() throws Exception {
        String a1 = awakeableOf("approval", "a-1");
        Run preview = cli("workflows", "complete-awakeable", a1, "--value", "\"alice\"", "--url", url);
        assertThat(preview.code()).as(preview.err()).isZero();
        assertThat(preview.out())
                .contains("awakeable " + a1 + " of approval/a-1: would complete (preview; add --force)")
                .contains("with value \"alice\"");
        assertThat(show("approval", "a-1").get("awakeables").get(0).get("status").asText()).isEqualTo("pending");

        Run complete = cli("workflows", "complete-awakeable", a1, "--value", "\"alice\"", "--force", "--url", url,
                "--json");
        assertThat(complete.code()).isZero();
        assertThat(complete.json().get("outcome").asText()).isEqualTo("SETTLED");
        assertThat(complete.json().get("workflow").asText()).isEqualTo("approval/a-1");
        assertThat(complete.json().get("value").asText()).isEqualTo("alice");
        JsonNode a1Shown = show("approval", "a-1");
        assertThat(a1Shown.get("workflow").get("status").asText()).isEqualTo("running");
        assertThat(a1Shown.get("awakeables").get(0).get("status").asText()).isEqualTo("completed");
        assertThat(a1Shown.get("awakeables").get(0).get("value").asText()).isEqualTo("alice");

        Run twice = cli("workflows", "complete-awakeable", a1, "--value", "{\"by\":\"bob\"}", "--force", "--url", url);
        assertThat(twice.code()).isZero();
        assertThat(twice.out()).contains("nothing changed (ALREADY_COMPLETED)");
        assertThat(cli("workflows", "fail-awakeable", a1, "--reason", "late", "--url", url).out())
                .contains("is completed: fail would change nothing");

        String a2 = awakeableOf("approval", "a-2");
        Run failPreview = cli("workflows", "fail-awakeable", a2, "--reason", "no budget", "--url", url, "--json");
        assertThat(failPreview.json().get("applied").asBoolean()).isFalse();
        assertThat(failPreview.json().get("status").asText()).isEqualTo("pending");
        Run fail = cli("workflows", "fail-awakeable", a2, "--reason", "no budget", "--force", "--url", url);
        assertThat(fail.code()).isZero();
        assertThat(fail.out()).contains("failed with reason no budget; its workflow is woken (SETTLED)");
        assertThat(show("approval", "a-2").get("awakeables").get(0).get("failure").asText()).isEqualTo("no budget");

        Run badUuid = cli("workflows", "complete-awakeable", "not-a-uuid", "--value", "1", "--url", url);
        assertThat(badUuid.code()).isEqualTo(2);
        assertThat(badUuid.err()).contains("'not-a-uuid' is not an awakeable id");
        Run badJson = cli("workflows", "complete-awakeable", a1, "--value", "{oops", "--force", "--url", url);
        assertThat(badJson.code()).isEqualTo(2);
        assertThat(badJson.err()).contains("not valid JSON");
        Run bareWord = cli("workflows", "complete-awakeable", a1, "--value", "alice", "--url", url);
        assertThat(bareWord.code()).isEqualTo(2);
        assertThat(bareWord.err()).contains("quote a string as '\"text\"'");
        assertThat(cli("workflows", "complete-awakeable", a1, "--url", url).code()).isEqualTo(2);
        Run blank = cli("workflows", "fail-awakeable", a2, "--reason", " ", "--url", url);
        assertThat(blank.code()).isEqualTo(2);
        assertThat(blank.err()).contains("--reason must not be blank");
        String stranger = UUID.randomUUID().toString();
        Run unknown = cli("workflows", "complete-awakeable", stranger, "--value", "1", "--force", "--url", url);
        assertThat(unknown.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(unknown.err().strip()).isEqualTo("waymark: no awakeable " + stranger);
    }

    @Test
    void errors_are_one_line_with_exit_codes_scripts_can_rely_on() {
        // no database URL is a usage error (2), like any missing option; before: 1, as if an operation failed
        Run noUrl = cli("subscriptions", "status");
        assertThat(noUrl.code()).isEqualTo(2);
        assertThat(noUrl.err()).startsWith("no database URL: give --url JDBC_URL or set the environment variable"
                + " WAYMARK_DATABASE_URL").contains("Usage: waymark subscriptions status");
        assertThat(cli("workflows", "list").code()).isEqualTo(2);
        assertThat(cli("migrate", "sql").code()).as("needs no database").isZero();

        Run unreachable = cli("subscriptions", "status", "--url", "jdbc:postgresql://127.0.0.1:1/nowhere");
        assertThat(unreachable.code()).isEqualTo(WaymarkCli.UNREACHABLE);
        assertThat(unreachable.err()).startsWith("waymark: cannot connect to the database").doesNotContain("\tat ");
        assertThat(unreachable.err().lines().count()).isOne();

        Run noSchema = cli("subscriptions", "status", "--url", url, "--schema", "missing");
        assertThat(noSchema.code()).isEqualTo(WaymarkCli.NO_SCHEMA);
        assertThat(noSchema.err()).contains("\"missing\"");

        Run badSchema = cli("migrate", "sql", "--schema", "Bad-Name");
        assertThat(badSchema.code()).isEqualTo(2);
        assertThat(badSchema.err()).contains("'Bad-Name'");

        Run unknownPool = cli("shards", "status", "--subscription", "nope", "--url", url);
        assertThat(unknownPool.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(unknownPool.err()).contains("no sharded subscription named 'nope'");

        // before: "released buckets []" and exit 0, as if a worker had been released
        Run unknownRelease = cli("shards", "release", "--subscription", "nope", "--worker", "w", "--force", "--url",
                url);
        assertThat(unknownRelease.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(unknownRelease.err()).contains("no sharded subscription named 'nope'");
        // bad values are usage errors (2), found before any connection; before: 1, or 3 without a database
        Run badPosition = cli("subscriptions", "reset", "--subscription", "s", "--to", "x", "--url", url);
        assertThat(badPosition.code()).isEqualTo(2);
        assertThat(badPosition.err()).contains("--to takes a position tx/seq");
        Run badLimit = cli("workflows", "collect", "--retention", "7d", "--limit", "0");
        assertThat(badLimit.code()).isEqualTo(2);
        assertThat(badLimit.err()).contains("--limit must be between 1 and 10000, got 0");
        assertThat(cli("workflows", "list", "--limit", "20000").code()).isEqualTo(2);
        // every --limit takes 1-10000 and is checked before connecting (an unreachable URL would exit 3);
        // before: streams list/read took 50000 and failed on 0 only after connecting, tail and dead-letters
        // list checked >= 1 only
        String nowhere = "jdbc:postgresql://127.0.0.1:1/nowhere";
        for (String[] command : new String[][]{{"streams", "list"}, {"streams", "read", "--stream", "s-1"},
                {"dead-letters", "list", "--subscription", "s"}, {"workflows", "list"},
                {"workflows", "collect", "--retention", "7d"}}) {
            for (String limit : new String[]{"0", "10001", "50000"}) {
                List<String> args = new ArrayList<>(List.of(command));
                args.addAll(List.of("--limit", limit, "--url", nowhere));
                Run run = cli(args.toArray(String[]::new));
                assertThat(run.code()).as(args + ": " + run.err()).isEqualTo(2);
                assertThat(run.err()).as(String.join(" ", args))
                        .startsWith("--limit must be between 1 and 10000, got " + limit);
            }
        }
        // streams tail's --limit counts the events to follow: at least 1, no upper bound
        Run tailZero = cli("streams", "tail", "--limit", "0", "--url", nowhere);
        assertThat(tailZero.code()).isEqualTo(2);
        assertThat(tailZero.err()).startsWith("--limit must be at least 1, got 0");
        assertThat(cli("streams", "tail", "--limit", "50000", "--url", nowhere).code())
                .as("past the check, the unreachable database").isEqualTo(WaymarkCli.UNREACHABLE);

        Run usage = cli("dead-letters", "list");
        assertThat(usage.code()).isEqualTo(2);
        assertThat(usage.err()).contains("--subscription");

        Run noWorkflowSchema = cli("workflows", "list", "--url", url, "--schema", "missing");
        assertThat(noWorkflowSchema.code()).isEqualTo(WaymarkCli.NO_SCHEMA);
        assertThat(cli("workflows", "list", "--url", "jdbc:postgresql://127.0.0.1:1/nowhere").code())
                .isEqualTo(WaymarkCli.UNREACHABLE);

        Run verbose = cli("subscriptions", "status", "--url", url, "--schema", "missing", "--verbose");
        assertThat(verbose.err()).contains("\tat ");
    }

    @Test
    void streams_tail_follows_appends_live_until_its_limit_or_timeout() throws Exception {
        var pool = POSTGRES.newDataSource(4);
        try (EventStore store = EventStore.builder(pool).build()) {
            String from = store.headPosition().toString();
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            CompletableFuture<Integer> tail = CompletableFuture.supplyAsync(() -> WaymarkCli.run(
                    new PrintWriter(out, true), new PrintWriter(err, true), "streams", "tail", "--category", "cart",
                    "--from", from, "--limit", "3", "--timeout", "30s", "--json", "--url", url));
            store.append("cart-1", ExpectedVersion.any(), EventData.json("Added", "{\"sku\":\"a\"}"));
            Awaitility.await().atMost(WAIT).until(() -> out.toString().contains("\"Added\""));
            store.append("other-1", ExpectedVersion.any(), EventData.json("Noise", "{}"));
            store.append("cart-2", ExpectedVersion.any(), EventData.json("Added", "{\"sku\":\"b\"}"));
            store.append("cart-1", ExpectedVersion.any(), EventData.json("CheckedOut", "{}"));
            assertThat(tail.get(30, TimeUnit.SECONDS)).as(err.toString()).isZero();
            List<JsonNode> lines = new ArrayList<>();
            for (String line : out.toString().lines().toList()) {
                lines.add(WaymarkCli.JSON.readTree(line));
            }
            assertThat(lines).extracting(n -> n.get("stream").asText() + "@" + n.get("version").asInt() + " "
                    + n.get("type").asText())
                    .containsExactly("cart-1@1 Added", "cart-2@1 Added", "cart-1@2 CheckedOut");
            assertThat(lines.get(1).get("data").get("sku").asText()).isEqualTo("b");
            assertThat(lines).allSatisfy(n -> assertThat(n.get("position").asText()).matches("\\d+/\\d+"));
        }

        Run first = cli("streams", "tail", "--category", "cart", "--from", "start", "--limit", "2", "--url", url);
        assertThat(first.code()).isZero();
        assertThat(first.out().lines().toList()).hasSize(2).first().asString().contains("cart-1@1").contains("Added");
        Run quiet = cli("streams", "tail", "--category", "nothing", "--timeout", "200ms", "--url", url, "--json");
        assertThat(quiet.code()).isZero();
        assertThat(quiet.out()).isEmpty();

        Run badFrom = cli("streams", "tail", "--from", "yesterday", "--url", url);
        assertThat(badFrom.code()).isEqualTo(2);
        assertThat(badFrom.err()).contains("--from takes head, start or a position tx/seq, got 'yesterday'");
        Run badTimeout = cli("streams", "tail", "--timeout", "0s", "--url", url);
        assertThat(badTimeout.code()).isEqualTo(2);
        assertThat(badTimeout.err()).contains("'0s' is not a positive duration");
        assertThat(cli("streams", "tail", "--limit", "0", "--url", url).code()).isEqualTo(2);
    }

    @Test
    void subscriptions_status_measures_lag_for_a_known_target_and_says_when_it_cannot() throws Exception {
        var pool = POSTGRES.newDataSource(4);
        try (EventStore store = EventStore.builder(pool).build()) {
            for (int i = 1; i <= 3; i++) {
                store.append("inv-" + i, ExpectedVersion.any(), EventData.json("Counted", "{}"));
            }
            try (Subscription s = Subscription.builder(store, "stock", Target.category("inv")).start(d -> Ack.ok())) {
                Awaitility.await().atMost(WAIT).until(() -> SubscriptionLag.measure(store, "stock",
                        Target.category("inv"), Partition.WHOLE).eventsBehind() == 0);
            }
            store.append("inv-1", ExpectedVersion.any(), EventData.json("Counted", "{}"));
            store.append("inv-4", ExpectedVersion.any(), EventData.json("Counted", "{}"));
            store.append("misc-1", ExpectedVersion.any(), EventData.json("Other", "{}"));
            // a pool of two members at the start, and a subscription whose target the CLI cannot know
            Checkpoints checkpoints = Checkpoints.of(store);
            checkpoints.save("inv-pool", Partition.of(0, 2), GlobalPosition.START);
            checkpoints.save("inv-pool", Partition.of(1, 2), GlobalPosition.START);
            checkpoints.save("inv-audit", Partition.WHOLE, GlobalPosition.START);
        }

        Run unknown = cli("subscriptions", "status", "--subscription", "stock", "--url", url, "--json");
        assertThat(unknown.code()).isZero();
        assertThat(unknown.json()).singleElement().satisfies(r -> {
            assertThat(r.get("target").isNull()).isTrue();
            assertThat(r.get("eventsBehind").isNull()).isTrue();
            assertThat(r.get("lagUnknown").asText()).contains("give --target stock=all|CATEGORY");
            assertThat(r.get("horizonHiddenEvents").asLong()).isNotNegative();
        });
        Run category = cli("subscriptions", "status", "--subscription", "stock", "--target", "inv", "--url", url,
                "--json");
        assertThat(category.json()).singleElement().satisfies(r -> {
            assertThat(r.get("target").asText()).isEqualTo("inv");
            assertThat(r.get("eventsBehind").asLong()).isEqualTo(2);
            assertThat(Duration.parse(r.get("oldestUnreadAge").asText()).isNegative()).isFalse();
            assertThat(r.get("lagUnknown").isNull()).isTrue();
        });
        Run all = cli("subscriptions", "status", "--target", "stock=all", "--target", "inv-pool=inv", "--url", url,
                "--json");
        assertThat(all.code()).as(all.err()).isZero();
        assertThat(all.json()).filteredOn(r -> r.get("subscription").asText().equals("stock")).singleElement()
                .satisfies(r -> assertThat(r.get("eventsBehind").asLong()).isEqualTo(3));
        assertThat(all.json()).filteredOn(r -> r.get("subscription").asText().equals("inv-pool")).hasSize(2)
                .allSatisfy(r -> {
                    assertThat(r.get("groupSize").asInt()).isEqualTo(2);
                    assertThat(r.get("eventsBehind").asLong()).isNotNegative();
                });
        assertThat(all.json()).filteredOn(r -> r.get("subscription").asText().equals("inv-pool"))
                .extracting(r -> r.get("eventsBehind").asLong()).as("the 5 inv events, split between the members")
                .satisfies(behind -> assertThat(behind.get(0) + behind.get(1)).isEqualTo(5));
        assertThat(all.json()).filteredOn(r -> r.get("subscription").asText().equals("inv-audit")).singleElement()
                .satisfies(r -> assertThat(r.get("eventsBehind").isNull()).isTrue());

        Run text = cli("subscriptions", "status", "--target", "stock=inv", "--url", url);
        assertThat(text.out()).contains("horizon lag: ").contains("TARGET").contains("BEHIND")
                .contains("unknown target (give --target inv-audit=all|CATEGORY)");
        assertThat(text.out().lines().filter(l -> l.startsWith("stock"))).singleElement().asString()
                .contains(" inv ").contains(" 2  ");

        Run stranger = cli("subscriptions", "status", "--target", "nope=inv", "--url", url);
        assertThat(stranger.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(stranger.err()).contains("no subscription named 'nope'");
        assertThat(cli("subscriptions", "status", "--target", "inv", "--url", url).code()).isEqualTo(2);
        Run badCategory = cli("subscriptions", "status", "--target", "stock=in-v", "--url", url);
        assertThat(badCategory.code()).isEqualTo(2);
        assertThat(badCategory.err()).contains("--target stock=in-v");
    }

    /** Replays into nothing, successfully; remembers what it saw. */
    public static final class OkHandler implements EventHandler {
        static final Queue<String> SEEN = new ConcurrentLinkedQueue<>();

        /** For the CLI's --handler. */
        public OkHandler() {}

        @Override
        public Ack handle(Delivery delivery) {
            SEEN.add(delivery.event().streamName() + " " + delivery.subscription());
            return Ack.ok();
        }
    }

    /** Dead-letters every replay again. */
    public static final class StillBroken implements EventHandler {
        /** For the CLI's --handler. */
        public StillBroken() {}

        @Override
        public Ack handle(Delivery delivery) {
            return Ack.deadLetter(DeadLetterReason.poison("still broken"));
        }
    }

    @Test
    void dead_letters_filter_by_reason_and_replay_and_replay_through_a_handler_class() throws Exception {
        var pool = POSTGRES.newDataSource(4);
        try (EventStore store = EventStore.builder(pool).build()) {
            store.append("refund-1", ExpectedVersion.any(), EventData.json("Poison", "{}"));
            store.append("refund-2", ExpectedVersion.any(), EventData.json("Invalid", "{}"));
            store.append("refund-3", ExpectedVersion.any(), EventData.json("Poison", "{}"));
            try (Subscription s = Subscription.builder(store, "refunds", Target.category("refund"))
                    .start(d -> Ack.deadLetter(d.event().type().equals("Poison")
                            ? DeadLetterReason.poison("bad")
                            : DeadLetterReason.invalid("no amount")))) {
                Awaitility.await().atMost(WAIT).until(() -> DeadLetters.of(store).count("refunds") == 3);
            }
        }
        Run poison = cli("dead-letters", "list", "--subscription", "refunds", "--reason", "poison", "--url", url,
                "--json");
        assertThat(poison.json()).extracting(n -> n.get("stream").asText()).containsExactly("refund-3", "refund-1");
        assertThat(poison.json()).allSatisfy(n -> assertThat(n.get("reasonKind").asText()).isEqualTo("poison"));
        Run invalid = cli("dead-letters", "list", "--subscription", "refunds", "--reason", "invalid", "--url", url,
                "--json");
        long invalidId = invalid.json().get(0).get("id").asLong();
        assertThat(invalid.json()).singleElement().satisfies(n -> {
            assertThat(n.get("reason").asText()).isEqualTo("invalid payload: no amount");
            assertThat(n.get("replayedAt").isNull()).isTrue();
        });
        assertThat(listed("--replayed", "no")).hasSize(3);
        assertThat(listed("--replayed", "yes")).isEmpty();
        Run page = cli("dead-letters", "list", "--subscription", "refunds", "--limit", "1", "--url", url);
        assertThat(page.out()).contains("REPLAYED").contains("refund-3@1").contains("(more: --before ");
        // exactly as many as the limit: no hint (before: "(more: --before N)", and that page was empty)
        assertThat(cli("dead-letters", "list", "--subscription", "refunds", "--reason", "invalid", "--limit", "1",
                "--url", url).out()).contains("no amount").doesNotContain("(more:");
        Run older = cli("dead-letters", "list", "--subscription", "refunds", "--before",
                Long.toString(invalidId), "--reason", "poison", "--url", url, "--json");
        assertThat(older.json()).extracting(n -> n.get("stream").asText()).containsExactly("refund-1");

        Run preview = cli("dead-letters", "replay", "--subscription", "refunds", "--id", Long.toString(invalidId),
                "--url", url);
        assertThat(preview.code()).isZero();
        assertThat(preview.out()).contains("refunds: would replay (preview; add --force --handler CLASS) 1 dead "
                + "letter(s)").contains("refund-2@1");
        assertThat(listed("--replayed", "yes")).isEmpty();

        Run broken = cli("dead-letters", "replay", "--subscription", "refunds", "--id", Long.toString(invalidId),
                "--force", "--handler", StillBroken.class.getName(), "--url", url, "--json");
        assertThat(broken.code()).isEqualTo(WaymarkCli.FAILED);
        assertThat(broken.err().strip()).isEqualTo("waymark: 1 of 1 replayed dead letter(s) did not succeed");
        assertThat(broken.json().get("failed").asInt()).isOne();
        assertThat(broken.json().get("letters")).singleElement().satisfies(
                l -> assertThat(l.get("outcome").asText()).isEqualTo("dead-lettered again: poison: still broken"));
        assertThat(listed("--replayed", "yes")).singleElement()
                .satisfies(n -> assertThat(n.get("replayOutcome").asText()).startsWith("dead-lettered again"));

        OkHandler.SEEN.clear();
        Run replay = cli("dead-letters", "replay", "--subscription", "refunds", "--all", "--force", "--handler",
                OkHandler.class.getName(), "--url", url, "--json");
        assertThat(replay.code()).as(replay.err()).isZero();
        assertThat(replay.json().get("applied").asBoolean()).isTrue();
        assertThat(replay.json().get("letters")).extracting(l -> l.get("stream").asText() + " " + l.get("outcome")
                .asText()).containsExactly("refund-1 ok", "refund-2 ok", "refund-3 ok");
        assertThat(OkHandler.SEEN).containsExactly("refund-1 refunds", "refund-2 refunds", "refund-3 refunds");
        assertThat(listed("--replayed", "yes")).hasSize(3);

        Run again = cli("dead-letters", "replay", "--subscription", "refunds", "--all", "--url", url, "--json");
        assertThat(again.json().get("letters")).isEmpty();
        assertThat(again.json().get("skipped")).hasSize(3);
        assertThat(cli("dead-letters", "replay", "--subscription", "refunds", "--all", "--url", url).out())
                .contains("skipped 3 already replayed ok");

        Run missing = cli("dead-letters", "replay", "--subscription", "refunds", "--id", "999999", "--url", url);
        assertThat(missing.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(missing.err().strip()).isEqualTo("waymark: no dead letter with id 999999");
        Run elsewhere = cli("dead-letters", "replay", "--subscription", "payouts", "--id", Long.toString(invalidId),
                "--url", url);
        assertThat(elsewhere.code()).isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(elsewhere.err()).contains("no subscription named 'payouts'");
        assertThat(replayUsage("--all", "--id", "1").err()).contains("give --id N (repeatable) or --all");
        assertThat(replayUsage().err()).contains("give --id N (repeatable) or --all");
        assertThat(replayUsage("--all", "--force").err()).contains("--force needs --handler CLASS");
        assertThat(replayUsage("--all", "--handler", "java.lang.String").err())
                .contains("is not a dev.waymark.subscription.EventHandler");
        assertThat(replayUsage("--all", "--handler", "com.example.Nope").err())
                .contains("is not on the CLI's classpath");
        Run badKind = cli("dead-letters", "list", "--subscription", "refunds", "--reason", "bogus", "--url", url);
        assertThat(badKind.code()).isEqualTo(2);
        assertThat(badKind.err()).contains("'bogus' is not a reason kind");
        assertThat(cli("dead-letters", "list", "--subscription", "refunds", "--replayed", "maybe", "--url", url)
                .code()).isEqualTo(2);
    }

    private static JsonNode listed(String... filter) throws Exception {
        List<String> args = new ArrayList<>(List.of("dead-letters", "list", "--subscription", "refunds", "--url", url,
                "--json"));
        args.addAll(List.of(filter));
        Run run = cli(args.toArray(String[]::new));
        assertThat(run.code()).as(run.err()).isZero();
        return run.json();
    }

    private static Run replayUsage(String... more) {
        List<String> args = new ArrayList<>(List.of("dead-letters", "replay", "--subscription", "refunds", "--url",
                url));
        args.addAll(List.of(more));
        Run run = cli(args.toArray(String[]::new));
        assertThat(run.code()).isEqualTo(2);
        return run;
    }
}
