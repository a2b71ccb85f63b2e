package dev.waymark.cli;

import dev.waymark.cli.Output.StoredJson;
import dev.waymark.subscription.DeadLetter;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.EventHandler;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark dead-letters list|show|replay|purge}. */
@Command(name = "dead-letters", description = "List, show, replay and purge dead letters.", subcommands = {
        DeadLettersCommand.ListLetters.class, DeadLettersCommand.Show.class,
        DeadLettersCommand.Replay.class, DeadLettersCommand.Purge.class})
final class DeadLettersCommand {

    @ParentCommand
    WaymarkCli root;

    /** The reason kinds a dead letter can have ({@code DeadLetterReason.kind()}). */
    static final Set<String> REASON_KINDS = Set.of("poison", "invalid", "max_attempts", "other");

    /** One dead letter as printed. */
    record Row(long id, int member, String eventId, String stream, long version, String eventType, String reasonKind,
            String reason, int attempts, String createdAt, String replayedAt, String replayOutcome) {}

    static NotFoundException noLetter(long id) {
        return new NotFoundException("no dead letter with id " + id);
    }

    static Row row(DeadLetter l) {
        return new Row(l.id(), l.member(), l.eventId().toString(), l.streamName(), l.streamVersion(), l.eventType(),
                l.reasonKind(), l.reasonSummary(), l.attempts(), l.createdAt().toString(),
                l.replayedAt().map(Object::toString).orElse(null), l.replayOutcome().orElse(null));
    }

    @Command(name = "list", description = "Dead letters of a subscription, newest first.")
    static final class ListLetters implements Callable<Integer> {
        private static final int PAGE = 200;

        @ParentCommand
        DeadLettersCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", required = true, description = "the subscription")
        String subscription;

        @Option(names = "--reason", paramLabel = "KIND", description = "only this reason kind: poison, invalid, max_attempts or other")
        String reason;

        @Option(names = "--replayed", paramLabel = "yes|no", description = "yes: only letters replayed at least once; no: only letters never replayed")
        String replayed;

        @Option(names = "--before", paramLabel = "ID", description = "only ids below this one (to page)")
        Long before;

        @Option(names = "--limit", defaultValue = WaymarkCli.DEFAULT_LIST_LIMIT, description = "at most this many, 1-10000 (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            if (reason != null && !REASON_KINDS.contains(reason)) {
                throw new CommandLine.ParameterException(spec.commandLine(), "'" + reason
                        + "' is not a reason kind (poison, invalid, max_attempts, other)");
            }
            if (replayed != null && !replayed.equals("yes") && !replayed.equals("no")) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--replayed takes yes or no, got '" + replayed + "'");
            }
            WaymarkCli.requireLimit(spec, limit);
            // DeadLetters.list has no filters: scan pages newest first and keep the matching letters.
            // one match more than asked for: the "more" hint only when there is more
            int wanted = limit + 1;
            List<DeadLetter> found = cli.withStore(store -> {
                Names.requireSubscription(store, subscription, true);
                DeadLetters deadLetters = DeadLetters.of(store);
                List<DeadLetter> kept = new ArrayList<>();
                long below = before == null ? Long.MAX_VALUE : before;
                boolean filtered = reason != null || replayed != null;
                while (kept.size() < wanted) {
                    int want = filtered ? PAGE : wanted - kept.size();
                    List<DeadLetter> page = deadLetters.list(subscription, below, want);
                    for (DeadLetter l : page) {
                        if (kept.size() < wanted && matches(l)) {
                            kept.add(l);
                        }
                    }
                    if (page.size() < want) {
                        break;
                    }
                    below = page.get(page.size() - 1).id();
                }
                return kept;
            });
            boolean more = found.size() > limit;
            List<Row> rows = found.stream().limit(limit).map(DeadLettersCommand::row).toList();
            StringBuilder text = new StringBuilder(String.format("%8s  %-24s %-14s %8s  %-24s %s%n", "ID", "STREAM",
                    "TYPE", "ATTEMPTS", "REPLAYED", "REASON"));
            rows.forEach(r -> text.append(Output.row("%8d  %-24s %-14s %8d  %-24s %s%n", r.id(),
                    r.stream() + "@" + r.version(), r.eventType(), r.attempts(),
                    r.replayOutcome() == null ? "-" : r.replayOutcome(), r.reason())));
            if (more) {
                text.append("(more: --before ").append(rows.get(rows.size() - 1).id()).append(")\n");
            }
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }

        private boolean matches(DeadLetter l) {
            return (reason == null || reason.equals(l.reasonKind()))
                    && (replayed == null || replayed.equals("yes") == l.replayedAt().isPresent());
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
            DeadLetter l = cli.withStore(store -> DeadLetters.of(store).get(id)).orElseThrow(() -> noLetter(id));
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
            value.put("reasonJson", StoredJson.of(l.reasonJson()));
            value.put("attempts", l.attempts());
            value.put("error", l.error().map(DeadLettersCommand::error).orElse(null));
            value.put("createdAt", l.createdAt().toString());
            value.put("replayedAt", l.replayedAt().map(Object::toString).orElse(null));
            value.put("replayOutcome", l.replayOutcome().orElse(null));
            StringBuilder text = new StringBuilder();
            value.forEach((k, v) -> text.append(Output.row("%-14s %s%n", k, v instanceof Map<?, ?> e
                    ? e.get("type") + (e.get("message") == null ? "" : ": " + e.get("message"))
                    : v)));
            cli.print(spec.commandLine().getOut(), value, text.toString());
            return 0;
        }
    }

    /** The handler's exception as printed: its class and, when it had one, its message. */
    private static Map<String, String> error(DeadLetter.HandlerError error) {
        Map<String, String> value = new java.util.LinkedHashMap<>();
        value.put("type", error.type());
        value.put("message", error.message().orElse(null));
        return value;
    }

    /** One replayed (or, in a preview, to-be-replayed) dead letter as printed. */
    record ReplayRow(long id, String stream, long version, String eventType, String outcome) {}

    @Command(name = "replay", description = "Deliver dead letters once more, to an event handler class of yours"
            + " (--handler, from --classpath) (preview without --force). A letter already replayed ok is skipped; the"
            + " letters stay recorded with the outcome: purge them when done.")
    static final class Replay implements Callable<Integer> {
        @ParentCommand
        DeadLettersCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--subscription", required = true, description = "the subscription")
        String subscription;

        @Option(names = "--id", paramLabel = "N", description = "this dead letter (repeatable)")
        List<Long> ids = new ArrayList<>();

        @Option(names = "--all", description = "every dead letter of the subscription not yet replayed ok")
        boolean all;

        @Option(names = "--handler", paramLabel = "CLASS", description = "a dev.waymark.subscription.EventHandler"
                + " with a public no-argument constructor, in --classpath or on the CLI's classpath; needed with"
                + " --force (the CLI cannot run your subscription's handler otherwise)")
        String handler;

        @Option(names = "--classpath", paramLabel = "PATH", description = "where --handler and what it needs are:"
                + " jars, class directories and DIR/* (every jar in DIR), separated by the platform's path separator"
                + " or repeated; loaded in a class loader of their own (java -jar ignores -cp and CLASSPATH)")
        List<String> classpath = new ArrayList<>();

        @Option(names = "--force", description = "really replay")
        boolean force;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            if (all == !ids.isEmpty()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "give --id N (repeatable) or --all");
            }
            if (force && handler == null) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--force needs --handler CLASS: the CLI cannot run your subscription's handler otherwise");
            }
            if (!classpath.isEmpty() && handler == null) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--classpath needs --handler CLASS");
            }
            HandlerLoader loader = new HandlerLoader(spec.commandLine(), classpath);
            EventHandler eventHandler;
            try {
                eventHandler = handler == null ? null : loader.load(handler);
            } catch (RuntimeException e) {
                loader.close();
                throw e;
            }
            Map<String, Object> value = new LinkedHashMap<>();
            List<ReplayRow> rows = new ArrayList<>();
            List<Long> skipped = new ArrayList<>();
            try {
                loader.withContext(() -> cli.withStore(store -> {
                    Names.requireSubscription(store, subscription, true);
                    DeadLetters deadLetters = DeadLetters.of(store);
                    List<DeadLetter> pending = new ArrayList<>();
                    for (DeadLetter l : select(deadLetters)) {
                        if (l.replayOutcome().filter(DeadLetters.REPLAYED_OK::equals).isPresent()) {
                            skipped.add(l.id());
                        } else {
                            pending.add(l);
                        }
                    }
                    List<DeadLetter> done = force
                            ? deadLetters.replay(pending.stream().map(DeadLetter::id).toList(), eventHandler)
                            : pending;
                    done.forEach(l -> rows.add(new ReplayRow(l.id(), l.streamName(), l.streamVersion(),
                            l.eventType(), force ? l.replayOutcome().orElse(null) : null)));
                    return null;
                }));
            } finally {
                if (eventHandler instanceof AutoCloseable closeable) {
                    try {
                        closeable.close();
                    } catch (Exception e) {
                        spec.commandLine().getErr().println("waymark: closing the handler failed: " + e);
                    }
                }
                loader.close();
            }
            long failed = rows.stream().filter(r -> force && !DeadLetters.REPLAYED_OK.equals(r.outcome())).count();
            value.put("subscription", subscription);
            value.put("applied", force);
            value.put("letters", rows);
            value.put("skipped", skipped);
            value.put("failed", failed);
            StringBuilder text = new StringBuilder(Output.cell(subscription) + ": " + (force
                    ? "replayed "
                    : "would replay (preview;"
                            + " add --force --handler CLASS) ")
                    + rows.size() + " dead letter(s)"
                    + (skipped.isEmpty() ? "" : ", skipped " + skipped.size() + " already replayed ok " + skipped)
                    + "\n");
            rows.forEach(r -> text.append(Output.row("%8d  %-24s %-14s %s%n", r.id(), r.stream() + "@" + r.version(),
                    r.eventType(), r.outcome() == null ? "" : r.outcome())));
            cli.print(spec.commandLine().getOut(), value, text.toString());
            if (failed > 0) {
                spec.commandLine().getErr().println("waymark: " + failed + " of " + rows.size()
                        + " replayed dead letter(s) did not succeed");
                return WaymarkCli.FAILED;
            }
            return 0;
        }

        /** The selected letters of the subscription, oldest first. */
        private List<DeadLetter> select(DeadLetters deadLetters) {
            List<DeadLetter> letters = new ArrayList<>();
            if (all) {
                long below = Long.MAX_VALUE;
                List<DeadLetter> page;
                do {
                    page = deadLetters.list(subscription, below, 500);
                    letters.addAll(page);
                    below = page.isEmpty() ? below : page.get(page.size() - 1).id();
                } while (page.size() == 500);
            } else {
                for (long id : ids.stream().distinct().toList()) {
                    DeadLetter l = deadLetters.get(id).orElseThrow(() -> noLetter(id));
                    if (!l.subscription().equals(subscription)) {
                        throw new NotFoundException("dead letter " + id + " belongs to subscription "
                                + Names.quote(l.subscription()) + ", not " + Names.quote(subscription));
                    }
                    letters.add(l);
                }
            }
            letters.sort(Comparator.comparingLong(DeadLetter::id));
            return letters;
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
            long count = cli.withStore(store -> {
                Names.requireSubscription(store, subscription, true);
                DeadLetters deadLetters = DeadLetters.of(store);
                return force ? (long) deadLetters.purge(subscription) : deadLetters.count(subscription);
            });
            cli.print(spec.commandLine().getOut(), Map.of("subscription", subscription, "deadLetters", count,
                    "applied", force),
                    Output.cell(subscription) + ": " + (force
                            ? "purged "
                            : "would purge (preview; add --force) ")
                            + count + " dead letter(s)\n");
            return 0;
        }
    }
}
