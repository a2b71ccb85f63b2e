package dev.waymark.cli;

import dev.waymark.store.GlobalPosition;
import dev.waymark.subscription.CheckpointRow;
import dev.waymark.subscription.Checkpoints;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark subscriptions status|reset}. */
@Command(name = "subscriptions", description = "Inspect and reset subscription checkpoints.",
        subcommands = {SubscriptionsCommand.Status.class, SubscriptionsCommand.Reset.class})
final class SubscriptionsCommand {

    @ParentCommand
    WaymarkCli root;

    /** One checkpoint as printed. */
    record Row(String subscription, int member, int groupSize, String position, String updatedAt) {}

    @Command(name = "status", description = "Checkpoints per subscription and member.")
    static final class Status implements Callable<Integer> {
        @ParentCommand
        SubscriptionsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", description = "only this subscription")
        String subscription;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            List<Row> rows = cli.withStore(store -> Checkpoints.of(store).list(subscription)).stream()
                    .map(SubscriptionsCommand::row).toList();
            StringBuilder text = new StringBuilder(String.format("%-30s %8s %20s  %s%n", "SUBSCRIPTION", "MEMBER",
                    "POSITION", "UPDATED"));
            rows.forEach(r -> text.append(String.format("%-30s %8s %20s  %s%n", r.subscription(),
                    r.member() + "/" + r.groupSize(), r.position(), r.updatedAt())));
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }
    }

    static Row row(CheckpointRow c) {
        return new Row(c.subscription(), c.member(), c.groupSize(), c.position().toString(), c.updatedAt().toString());
    }

    @Command(name = "reset", description = "Set every member's checkpoint of a subscription (preview without --force).")
    static final class Reset implements Callable<Integer> {
        @ParentCommand
        SubscriptionsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", required = true, description = "the subscription")
        String subscription;

        @Option(names = "--to", defaultValue = "0/0", description = "the position, tx/seq (default: the beginning)")
        String to;

        @Option(names = "--force", description = "really reset")
        boolean force;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            GlobalPosition position = GlobalPosition.parse(to);
            int members = cli.withStore(store -> {
                Checkpoints checkpoints = Checkpoints.of(store);
                return force ? checkpoints.reset(subscription, position) : checkpoints.list(subscription).size();
            });
            String verb = force ? "reset" : "would reset (preview; add --force)";
            cli.print(spec.commandLine().getOut(), java.util.Map.of("subscription", subscription, "members", members,
                    "position", position.toString(), "applied", force),
                    subscription + ": " + verb + " " + members + " member(s) to " + position + "\n");
            return 0;
        }
    }

}
