package dev.waymark.cli;

import dev.waymark.subscription.DeadLetter;
import dev.waymark.subscription.DeadLetters;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark dead-letters list|purge}. */
@Command(name = "dead-letters", description = "List and purge dead letters.",
        subcommands = {DeadLettersCommand.ListLetters.class, DeadLettersCommand.Show.class,
                DeadLettersCommand.Purge.class})
final class DeadLettersCommand {

    @ParentCommand
    WaymarkCli root;

    /** One dead letter as printed. */
    record Row(long id, int member, String eventId, String stream, long version, String eventType, String reason,
            int attempts, String createdAt, String replayOutcome) {}

    @Command(name = "list", description = "Dead letters of a subscription, newest first.")
    static final class ListLetters implements Callable<Integer> {
        @ParentCommand
        DeadLettersCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", required = true, description = "the subscription")
        String subscription;

        @Option(names = "--limit", defaultValue = "50", description = "at most this many (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            List<DeadLetter> letters = cli.withStore(store ->
                    DeadLetters.of(store).list(subscription, Long.MAX_VALUE, limit));
            List<Row> rows = letters.stream().map(l -> new Row(l.id(), l.member(), l.eventId().toString(),
                    l.streamName(), l.streamVersion(), l.eventType(), l.reasonSummary(), l.attempts(),
                    l.createdAt().toString(), l.replayOutcome().orElse(null))).toList();
            StringBuilder text = new StringBuilder(String.format("%8s  %-24s %-14s %8s  %s%n", "ID", "STREAM", "TYPE",
                    "ATTEMPTS", "REASON"));
            rows.forEach(r -> text.append(String.format("%8d  %-24s %-14s %8d  %s%n", r.id(),
                    r.stream() + "@" + r.version(), r.eventType(), r.attempts(), r.reason())));
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }
    }

    @Command(name = "show", description = "One dead letter with its reason as JSON.")
    static final class Show implements Callable<Integer> {
        @ParentCommand
        DeadLettersCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--id", required = true, description = "the dead letter's id")
        long id;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            DeadLetter l = cli.withStore(store -> DeadLetters.of(store).get(id)).orElseThrow(
                    () -> new IllegalArgumentException("no dead letter with id " + id));
            Map<String, Object> value = new java.util.LinkedHashMap<>();
            value.put("id", l.id());
            value.put("subscription", l.subscription());
            value.put("member", l.member());
            value.put("eventId", l.eventId().toString());
            value.put("stream", l.streamName());
            value.put("version", l.streamVersion());
            value.put("position", l.position().toString());
            value.put("eventType", l.eventType());
            value.put("reason", l.reasonSummary());
            value.put("reasonJson", l.reasonJson());
            value.put("attempts", l.attempts());
            value.put("createdAt", l.createdAt().toString());
            value.put("replayedAt", l.replayedAt().map(Object::toString).orElse(null));
            value.put("replayOutcome", l.replayOutcome().orElse(null));
            StringBuilder text = new StringBuilder();
            value.forEach((k, v) -> text.append(String.format("%-14s %s%n", k, v)));
            cli.print(spec.commandLine().getOut(), value, text.toString());
            return 0;
        }
    }

    @Command(name = "purge", description = "Delete a subscription's dead letters (preview without --force).")
    static final class Purge implements Callable<Integer> {
        @ParentCommand
        DeadLettersCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", required = true, description = "the subscription")
        String subscription;

        @Option(names = "--force", description = "really delete")
        boolean force;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            long count = cli.withStore(store -> force ? (long) DeadLetters.of(store).purge(subscription)
                    : DeadLetters.of(store).count(subscription));
            cli.print(spec.commandLine().getOut(), Map.of("subscription", subscription, "deadLetters", count,
                    "applied", force), subscription + ": " + (force ? "purged " : "would purge (preview; add --force) ")
                    + count + " dead letter(s)\n");
            return 0;
        }
    }
}
