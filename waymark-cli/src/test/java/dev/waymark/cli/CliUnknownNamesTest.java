package dev.waymark.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.ShardOwnership;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A mistyped subscription, pool, worker, stream, workflow, awakeable or dead-letter id is an error
 * naming it, with close matches, and one exit code in every command; nothing changes.
 */
class CliUnknownNamesTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static String url;
    private static EventStore store;
    private static ShardedSubscription worker;

    @BeforeAll
    static void seed() {
        url = POSTGRES.jdbcUrl();
        store = EventStore.builder(POSTGRES.newDataSource(6)).build();
        store.append("order-12", ExpectedVersion.any(), EventData.json("Placed", "{}"));
        try (Subscription s = Subscription.builder(store, "billing", Target.category("order"))
                .start(d -> Ack.deadLetter(DeadLetterReason.poison("no price")))) {
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> DeadLetters.of(store).count("billing") == 1);
        }
        Checkpoints.of(store).save("shipping", Partition.WHOLE, GlobalPosition.START);
        worker = ShardedSubscription.builder(store, "payments-pool", Target.category("order")).shards(2)
                .renewInterval(Duration.ofMillis(200)).leaseTtl(Duration.ofSeconds(30)).start(d -> Ack.ok());
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> worker.ownedBuckets().size() == 2);
    }

    @AfterAll
    static void tearDown() {
        worker.stop(Duration.ofSeconds(5));
        store.close();
    }

    private static CliRun notFound(String expected, String... args) {
        CliRun run = CliRun.of(List.of(args), "--url", url);
        assertThat(run.code()).as(String.join(" ", args) + ": " + run.out() + run.err())
                .isEqualTo(WaymarkCli.NOT_FOUND);
        assertThat(run.err()).as(String.join(" ", args)).startsWith("waymark: " + expected);
        assertThat(run.err().lines().count()).as(run.err()).isOne();
        return run;
    }

    @Test
    void a_mistyped_subscription_is_named_with_close_matches_and_changes_nothing() throws Exception {
        String hint = "no subscription named 'biling' (did you mean 'billing'?)";
        // before: exit 0 with "reset 0 member(s)", "purged 0 dead letter(s)", empty listings
        notFound(hint, "subscriptions", "reset", "--subscription", "biling", "--force");
        notFound(hint, "subscriptions", "status", "--subscription", "biling");
        notFound(hint, "subscriptions", "status", "--target", "biling=order");
        notFound(hint, "dead-letters", "list", "--subscription", "biling");
        notFound(hint, "dead-letters", "purge", "--subscription", "biling", "--force");
        notFound(hint, "dead-letters", "replay", "--subscription", "biling", "--all");
        notFound("no subscription named 'shiping' (did you mean 'shipping'?)", "subscriptions", "reset",
                "--subscription", "shiping");
        // no close match: the known names instead
        notFound("no subscription named 'zzz'; known: billing, payments-pool, shipping", "dead-letters", "list",
                "--subscription", "zzz");
        assertThat(DeadLetters.of(store).count("billing")).isOne();

        // a known subscription without any dead letter, and one with dead letters: fine
        CliRun empty = CliRun.of("dead-letters", "list", "--subscription", "shipping", "--url", url, "--json");
        assertThat(empty.code()).as(empty.err()).isZero();
        assertThat(empty.json()).isEmpty();
        assertThat(CliRun.of("dead-letters", "purge", "--subscription", "billing", "--url", url).code()).isZero();
    }

    @Test
    void a_mistyped_pool_or_worker_is_named_with_close_matches_and_releases_nothing() {
        String id = worker.workerId();
        notFound("no sharded subscription named 'payments-pol' (did you mean 'payments-pool'?)", "shards", "status",
                "--subscription", "payments-pol");
        notFound("no sharded subscription named 'payments-pol' (did you mean 'payments-pool'?)", "shards", "release",
                "--subscription", "payments-pol", "--worker", id, "--force");
        // a checkpointed subscription that is not a pool is not offered as one
        notFound("no sharded subscription named 'billing' (pools: payments-pool)", "shards", "status",
                "--subscription", "billing");
        // before: exit 0 with "released buckets [] of ..."
        String typo = id.substring(0, id.length() - 1);
        notFound("worker '" + typo + "' holds no bucket of pool 'payments-pool' (did you mean '" + id + "'?)",
                "shards", "release", "--subscription", "payments-pool", "--worker", typo, "--force");
        notFound("worker 'w-nobody' holds no bucket of pool 'payments-pool' (bucket owners: " + id + ")", "shards",
                "release", "--subscription", "payments-pool", "--worker", "w-nobody");
        assertThat(ShardedSubscription.ownership(store, "payments-pool")).extracting(ShardOwnership::live)
                .containsOnly(true);
    }

    @Test
    void unknown_streams_workflows_awakeables_and_dead_letters_exit_alike() {
        // before: each of these exited 1, like a failed operation
        notFound("no stream named 'order-21' (did you mean 'order-12'?)", "streams", "read", "--stream", "order-21");
        notFound("no workflow 'greet/nope'", "workflows", "show", "greet", "nope");
        notFound("no workflow 'greet/nope'", "workflows", "cancel", "greet", "nope", "--force");
        notFound("no workflow 'greet/nope'", "workflows", "retry", "greet", "nope");
        String stranger = UUID.randomUUID().toString();
        notFound("no awakeable " + stranger, "workflows", "complete-awakeable", stranger, "--value", "1", "--force");
        notFound("no awakeable " + stranger, "workflows", "fail-awakeable", stranger, "--reason", "no");
        notFound("no dead letter with id 999999", "dead-letters", "show", "--id", "999999");
        notFound("no dead letter with id 999999", "dead-letters", "replay", "--subscription", "billing", "--id",
                "999999");
        long id = DeadLetters.of(store).list("billing", Long.MAX_VALUE, 1).get(0).id();
        notFound("dead letter " + id + " belongs to subscription 'billing', not 'shipping'", "dead-letters", "replay",
                "--subscription", "shipping", "--id", Long.toString(id));
    }
}
