package dev.waymark.cli;

import dev.waymark.subscription.shard.ShardOwnership;
import dev.waymark.subscription.shard.ShardedSubscription;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark shards status}. */
@Command(name = "shards", description = "Inspect sharded subscription pools.", subcommands = {
        ShardsCommand.Status.class, ShardsCommand.Release.class})
final class ShardsCommand {

    @ParentCommand
    WaymarkCli root;

    /** One bucket as printed. */
    record Row(int bucket, String owner, long epoch, String leaseExpiresAt, String state) {}

    @Command(name = "status", description = "Owner, epoch, expiry and lease state per bucket.")
    static final class Status implements Callable<Integer> {
        @ParentCommand
        ShardsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", required = true, description = "the pool's subscription")
        String subscription;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            List<ShardOwnership> buckets = cli.withStore(store -> Names.requirePool(store, subscription));
            List<Row> rows = buckets.stream().map(o -> new Row(o.bucket(), o.owner().orElse(null), o.epoch(),
                    o.leaseExpiresAt().map(Object::toString).orElse(null),
                    o.live() ? "held" : o.owner().isPresent() ? "expired" : "free")).toList();
            StringBuilder text = new StringBuilder(String.format("%6s  %-18s %6s  %-8s %s%n", "BUCKET", "OWNER",
                    "EPOCH", "STATE", "EXPIRES"));
            rows.forEach(r -> text.append(Output.row("%6d  %-18s %6d  %-8s %s%n", r.bucket(),
                    r.owner() == null ? "-" : r.owner(), r.epoch(), r.state(),
                    r.leaseExpiresAt() == null ? "-" : r.leaseExpiresAt())));
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }
    }

    @Command(name = "release", description = "Release a dead worker's buckets (preview without --force).")
    static final class Release implements Callable<Integer> {
        @ParentCommand
        ShardsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", required = true, description = "the pool's subscription")
        String subscription;

        @Option(names = "--worker", required = true, description = "the worker id (see shards status)")
        String worker;

        @Option(names = "--force", description = "really release")
        boolean force;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            List<Integer> buckets = cli.withStore(store -> {
                // a mistyped pool or worker must not look like a release of nothing
                List<ShardOwnership> pool = Names.requirePool(store, subscription);
                Names.requireWorker(subscription, pool, worker);
                return force
                        ? ShardedSubscription.release(store, subscription, worker)
                        : pool.stream()
                                .filter(o -> o.owner().filter(worker::equals).isPresent()).map(ShardOwnership::bucket)
                                .toList();
            });
            cli.print(spec.commandLine().getOut(), java.util.Map.of("subscription", subscription, "worker", worker,
                    "buckets", buckets, "applied", force),
                    Output.cell(subscription) + ": " + (force ? "released " : "would release (preview; add --force) ")
                            + "buckets " + buckets + " of " + Output.cell(worker)
                            + "\n");
            return 0;
        }
    }
}
