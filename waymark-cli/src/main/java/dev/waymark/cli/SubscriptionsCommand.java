package dev.waymark.cli;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Horizon;
import dev.waymark.store.Partition;
import dev.waymark.subscription.CheckpointRow;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.SubscriptionConfigException;
import dev.waymark.subscription.SubscriptionLag;
import dev.waymark.subscription.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark subscriptions status|reset}. */
@Command(name = "subscriptions", description = "Inspect and reset subscription checkpoints.", subcommands = {
        SubscriptionsCommand.Status.class, SubscriptionsCommand.Reset.class})
final class SubscriptionsCommand {

    @ParentCommand
    WaymarkCli root;

    /**
     * One checkpoint as printed, with its lag: {@code eventsBehind} and {@code oldestUnreadAge} are
     * null when the subscription's target is unknown ({@code lagUnknown} says why), and the
     * store-wide visibility-horizon lag is repeated on every row.
     */
    record Row(String subscription, int member, int groupSize, String position, String updatedAt, String target,
            Long eventsBehind, String oldestUnreadAge, String lagUnknown, long horizonHiddenEvents,
            String horizonOldestWriter) {}

    @Command(name = "status", description = "Checkpoints per subscription and member, with lag and the store's "
            + "horizon lag.")
    static final class Status implements Callable<Integer> {
        @ParentCommand
        SubscriptionsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", description = "only this subscription")
        String subscription;

        @Option(names = "--target", paramLabel = "[SUB=]all|CATEGORY", description = "what subscription SUB reads,"
                + " to measure its lag (the database does not record it): all, or a category; repeatable; without"
                + " SUB= it applies to --subscription")
        List<String> targets = new ArrayList<>();

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            Map<String, Target> known = targets(spec, subscription, targets);
            List<Row> rows = cli.withStore(store -> {
                if (subscription != null) {
                    Names.requireSubscription(store, subscription, false);
                }
                List<CheckpointRow> checkpoints = Checkpoints.of(store).list(subscription);
                for (String name : known.keySet()) {
                    if (checkpoints.stream().noneMatch(c -> c.subscription().equals(name))) {
                        throw Names.unknown("no subscription named " + Names.quote(name), name,
                                Names.subscriptions(store), "known");
                    }
                }
                Horizon horizon = store.horizon();
                return checkpoints.stream().map(c -> row(store, c, known.get(c.subscription()), horizon)).toList();
            });
            StringBuilder text = new StringBuilder();
            if (!rows.isEmpty()) {
                text.append(String.format("horizon lag: %d committed event(s) not yet visible; oldest open writer %s%n",
                        rows.get(0).horizonHiddenEvents(), rows.get(0).horizonOldestWriter() == null
                                ? "none"
                                : WaymarkCli.human(Duration.parse(rows.get(0).horizonOldestWriter()))));
            }
            text.append(String.format("%-30s %8s %20s  %-27s %-18s %10s  %s%n", "SUBSCRIPTION", "MEMBER", "POSITION",
                    "UPDATED", "TARGET", "BEHIND", "OLDEST UNREAD"));
            rows.forEach(r -> text.append(Output.row("%-30s %8s %20s  %-27s %-18s %10s  %s%n", r.subscription(),
                    r.member() + "/" + r.groupSize(), r.position(), r.updatedAt(),
                    r.target() == null ? "?" : r.target(),
                    r.eventsBehind() == null ? "?" : r.eventsBehind().toString(),
                    r.eventsBehind() == null
                            ? "unknown target (give --target " + r.subscription() + "=all|CATEGORY)"
                            : r.eventsBehind() == 0 ? "-" : WaymarkCli.human(Duration.parse(r.oldestUnreadAge())))));
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }
    }

    private static Map<String, Target> targets(CommandSpec spec, String subscription, List<String> values) {
        Map<String, Target> targets = new LinkedHashMap<>();
        for (String value : values) {
            int eq = value.indexOf('=');
            String name = eq < 0 ? subscription : value.substring(0, eq);
            String what = value.substring(eq + 1);
            if (name == null || name.isBlank()) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--target takes SUB=all|CATEGORY (or all|CATEGORY with --subscription), got '" + value + "'");
            }
            try {
                targets.put(name, what.equals("all") ? Target.all() : Target.category(what));
            } catch (SubscriptionConfigException e) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--target " + value + ": " + e.getMessage());
            }
        }
        return targets;
    }

    private static Row row(EventStore store, CheckpointRow c, Target target, Horizon horizon) {
        String writer = horizon.oldestWriter().isZero() ? null : horizon.oldestWriter().toString();
        if (target == null) {
            return new Row(c.subscription(), c.member(), c.groupSize(), c.position().toString(),
                    c.updatedAt().toString(), null, null, null, "target unknown: the database does not record what '"
                            + c.subscription() + "' reads; give --target " + c.subscription() + "=all|CATEGORY",
                    horizon.hiddenEvents(), writer);
        }
        SubscriptionLag lag = SubscriptionLag.measure(store, c.subscription(), target,
                Partition.of(c.member(), c.groupSize()));
        return new Row(c.subscription(), c.member(), c.groupSize(), c.position().toString(), c.updatedAt().toString(),
                target instanceof Target.Category category ? category.name() : "all", lag.eventsBehind(),
                lag.oldestUnreadAge().toString(), null, horizon.hiddenEvents(), writer);
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
            GlobalPosition position;
            try {
                position = GlobalPosition.parse(to);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--to takes a position tx/seq (as"
                        + " printed by subscriptions status), got '" + to + "': " + e.getMessage());
            }
            int members = cli.withStore(store -> {
                Names.requireSubscription(store, subscription, false);
                Checkpoints checkpoints = Checkpoints.of(store);
                return force ? checkpoints.reset(subscription, position) : checkpoints.list(subscription).size();
            });
            String verb = force ? "reset" : "would reset (preview; add --force)";
            cli.print(spec.commandLine().getOut(), java.util.Map.of("subscription", subscription, "members", members,
                    "position", position.toString(), "applied", force),
                    Output.cell(subscription) + ": " + verb + " " + members + " member(s) to " + position + "\n");
            return 0;
        }
    }

}
