package dev.waymark.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.cli.Output.StoredJson;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.JournalEntry;
import dev.waymark.workflow.status.RetryOutcome;
import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.status.WorkflowDetails;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.WorkflowQuery;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/** {@code waymark workflows list|show|cancel|retry|complete-awakeable|fail-awakeable|collect}. */
@Command(name = "workflows", description = "Inspect, cancel, retry and collect workflows; settle awakeables.", subcommands = {
        WorkflowsCommand.ListWorkflows.class, WorkflowsCommand.Show.class, WorkflowsCommand.Cancel.class,
        WorkflowsCommand.Retry.class, AwakeableCommands.CompleteAwakeable.class,
        AwakeableCommands.FailAwakeable.class, CollectWorkflows.class})
final class WorkflowsCommand {

    @ParentCommand
    WaymarkCli root;

    /** Runs {@code work} with a workflow client (one that never runs workflows) on the configured database. */
    <T> T withClient(Function<WorkflowClient, T> work) {
        return root.withStore(store -> work.apply(WorkflowClient.create(store)));
    }

    /**
     * As {@link #withClient}, on a store with notifications on, so that what the client changes is
     * announced as the API announces it: a cancellation is broadcast to the engines (the one running
     * the body stops it before its next step), and a settlement or a retry sends the store's NOTIFY,
     * which wakes pushed resume workers at once instead of at their next poll.
     */
    <T> T withAnnouncingClient(Function<WorkflowClient, T> work) {
        return root.withStore(true, store -> work.apply(WorkflowClient.create(store)));
    }

    /** One instance as printed. */
    record Row(String name, String id, String status, int generation, int attempts, String lastError, String failure,
            String waitingOn, String wakeAfter, String nextAttemptAt, String leaseOwner, long leaseEpoch,
            String leaseExpiresAt, String parentName, String parentId, String createdAt, String updatedAt,
            String completedAt) {}

    /** One journal entry as printed. */
    record EntryRow(int generation, long version, String eventId, String type, String step, StoredJson data,
            String recordedAt) {}

    /** One awakeable as printed. */
    record AwakeableRow(String id, int generation, String label, String status, StoredJson value, String failure,
            String createdAt, String completedAt) {}

    static Row row(WorkflowInfo w) {
        return new Row(w.name(), w.id(), w.status().sqlValue(), w.generation(), w.attempts(), w.lastError(),
                w.failure(), w.waitingOn(), text(w.wakeAfter()), text(w.nextAttemptAt()), w.leaseOwner(),
                w.leaseEpoch(), text(w.leaseExpiresAt()), w.parentName(), w.parentId(), text(w.createdAt()),
                text(w.updatedAt()), text(w.completedAt()));
    }

    private static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }

    private static String dash(Object value) {
        return value == null ? "-" : value.toString();
    }

    private static String compact(StoredJson json) {
        return json == null ? "-" : json.json();
    }

    static NotFoundException unknown(String name, String id) {
        return new NotFoundException("no workflow " + Names.quote(name + "/" + id));
    }

    /** Parses a status as stored: running, suspended, completed, cancelled or failed. */
    static final class StatusConverter implements ITypeConverter<WorkflowStatus> {
        @Override
        public WorkflowStatus convert(String value) {
            try {
                return WorkflowStatus.fromSql(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("'" + value + "' is not a workflow status; use one of "
                        + String.join(", ", new StatusCandidates()));
            }
        }
    }

    /** The statuses, as {@code --status} takes them. */
    static final class StatusCandidates implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(WorkflowStatus.values()).map(WorkflowStatus::sqlValue).iterator();
        }
    }

    /** Parses an awakeable id. */
    static final class UuidConverter implements ITypeConverter<UUID> {
        @Override
        public UUID convert(String value) {
            try {
                return UUID.fromString(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("'" + value + "' is not an awakeable id (a UUID, as printed by "
                        + "workflows show)");
            }
        }
    }

    /** Parses a JSON document. */
    static final class JsonConverter implements ITypeConverter<JsonNode> {
        @Override
        public JsonNode convert(String value) {
            try {
                JsonNode node = WaymarkCli.JSON.readTree(value);
                if (node == null || node.isMissingNode()) {
                    throw new TypeConversionException(
                            "empty, expected a JSON value such as '\"yes\"' or '{\"ok\":true}'");
                }
                return node;
            } catch (JsonProcessingException e) {
                throw new TypeConversionException("not valid JSON (" + e.getOriginalMessage()
                        + "); quote a string as '\"text\"'");
            }
        }
    }

    @Command(name = "list", description = "Workflow instances by (name, id), optionally of one status or name.")
    static final class ListWorkflows implements Callable<Integer> {
        @ParentCommand
        WorkflowsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--status", converter = StatusConverter.class, completionCandidates = StatusCandidates.class, description = "only this status: ${COMPLETION-CANDIDATES}")
        WorkflowStatus status;

        @Option(names = "--name", description = "only workflows of this name")
        String name;

        @Option(names = "--after", description = "start after this instance, given as name/id")
        String after;

        @Option(names = "--limit", defaultValue = "50", description = "at most this many, 1-10000 (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            WaymarkCli.requireLimit(spec, limit);
            // one more than asked for (within the client's 10000): the "more" hint only when there is more
            int ask = Math.min(limit + 1, WorkflowQuery.MAX_LIMIT);
            WorkflowQuery.Builder query = WorkflowQuery.builder().status(status).name(name).limit(ask);
            if (after != null) {
                int slash = after.indexOf('/');
                if (slash <= 0 || slash == after.length() - 1) {
                    throw new CommandLine.ParameterException(spec.commandLine(),
                            "--after takes name/id (as printed by workflows list), got '" + after + "'");
                }
                query.after(after.substring(0, slash), after.substring(slash + 1));
            }
            WorkflowQuery page = query.build();
            List<Row> found = parent.withClient(client -> client.list(page)).stream()
                    .map(WorkflowsCommand::row).toList();
            boolean more = found.size() > limit || (ask == limit && found.size() == limit);
            List<Row> rows = found.subList(0, Math.min(limit, found.size()));
            StringBuilder text = new StringBuilder(String.format("%-40s %-10s %4s %8s  %-27s %s%n", "WORKFLOW",
                    "STATUS", "GEN", "ATTEMPTS", "UPDATED", "WAITING ON / FAILURE"));
            rows.forEach(r -> text.append(Output.row("%-40s %-10s %4d %8d  %-27s %s%n", r.name() + "/" + r.id(),
                    r.status(), r.generation(), r.attempts(), r.updatedAt(),
                    r.failure() != null ? r.failure() : dash(r.waitingOn()))));
            if (more) {
                Row last = rows.get(rows.size() - 1);
                text.append("(more: --after ").append(last.name()).append('/').append(last.id()).append(")\n");
            }
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }
    }

    @Command(name = "show", description = "One instance with its journal, awakeables, timer and children.")
    static final class Show implements Callable<Integer> {
        @ParentCommand
        WorkflowsCommand parent;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "the workflow name")
        String name;

        @Parameters(index = "1", paramLabel = "ID", description = "the instance id")
        String id;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            WorkflowDetails d = parent.withClient(client -> client.describe(name, id))
                    .orElseThrow(() -> unknown(name, id));
            Row info = row(d.info());
            List<EntryRow> journal = d.journal().stream().map(Show::entry).toList();
            List<AwakeableRow> awakeables = d.awakeables().stream().map(Show::awakeable).toList();
            List<Row> children = d.children().stream().map(WorkflowsCommand::row).toList();
            Map<String, Object> value = new LinkedHashMap<>();
            value.put("workflow", info);
            value.put("input", StoredJson.of(d.input()));
            value.put("result", StoredJson.of(d.result()));
            value.put("journal", journal);
            value.put("awakeables", awakeables);
            value.put("children", children);

            StringBuilder text = new StringBuilder();
            line(text, "workflow", info.name() + "/" + info.id());
            line(text, "status", info.status());
            line(text, "generation", info.generation());
            line(text, "attempts", info.attempts());
            line(text, "last error", info.lastError());
            line(text, "failure", info.failure());
            line(text, "waiting on", info.waitingOn());
            line(text, "wake after", info.wakeAfter());
            line(text, "next attempt", info.nextAttemptAt());
            line(text, "lease", info.leaseOwner() == null
                    ? null
                    : info.leaseOwner() + " epoch " + info.leaseEpoch()
                            + " until " + info.leaseExpiresAt());
            line(text, "parent", info.parentName() == null ? null : info.parentName() + "/" + info.parentId());
            line(text, "created", info.createdAt());
            line(text, "updated", info.updatedAt());
            line(text, "completed", info.completedAt());
            line(text, "input", d.input());
            line(text, "result", d.result());
            text.append(String.format("%njournal (generation %d)%n", info.generation()));
            text.append(String.format("  %7s  %-24s %-20s %-27s %s%n", "VERSION", "TYPE", "STEP", "RECORDED", "DATA"));
            journal.forEach(e -> text.append(Output.row("  %7d  %-24s %-20s %-27s %s%n", e.version(), e.type(),
                    dash(e.step()), e.recordedAt(), compact(e.data()))));
            text.append(String.format("%nawakeables%n"));
            text.append(
                    String.format("  %-36s %4s  %-20s %-10s %s%n", "ID", "GEN", "LABEL", "STATUS", "VALUE / FAILURE"));
            awakeables.forEach(a -> text.append(Output.row("  %-36s %4d  %-20s %-10s %s%n", a.id(), a.generation(),
                    a.label(), a.status(), a.failure() != null ? a.failure() : compact(a.value()))));
            text.append(String.format("%nchildren%n"));
            text.append(String.format("  %-40s %-10s %s%n", "WORKFLOW", "STATUS", "WAITING ON / FAILURE"));
            children.forEach(c -> text.append(Output.row("  %-40s %-10s %s%n", c.name() + "/" + c.id(), c.status(),
                    c.failure() != null ? c.failure() : dash(c.waitingOn()))));
            cli.print(spec.commandLine().getOut(), value, text.toString());
            return 0;
        }

        private static void line(StringBuilder text, String key, Object value) {
            text.append(Output.row("%-13s %s%n", key, dash(value)));
        }

        private static EntryRow entry(JournalEntry e) {
            return new EntryRow(e.generation(), e.version(), e.eventId().toString(), e.type(), e.step(),
                    StoredJson.of(e.data()), text(e.recordedAt()));
        }

        private static AwakeableRow awakeable(AwakeableInfo a) {
            return new AwakeableRow(a.id().toString(), a.generation(), a.label(), a.status(),
                    StoredJson.of(a.payload()), a.failure(), text(a.createdAt()), text(a.completedAt()));
        }
    }

    @Command(name = "cancel", description = "Cancel an instance and its live children (preview without --force).")
    static final class Cancel implements Callable<Integer> {
        @ParentCommand
        WorkflowsCommand parent;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "the workflow name")
        String name;

        @Parameters(index = "1", paramLabel = "ID", description = "the instance id")
        String id;

        @Option(names = "--force", description = "really cancel")
        boolean force;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            String target = Output.cell(name + "/" + id);
            Map<String, Object> value = parent.withAnnouncingClient(client -> {
                WorkflowInfo info = client.describe(name, id).map(WorkflowDetails::info)
                        .orElseThrow(() -> unknown(name, id));
                List<Map<String, String>> live = info.status().isTerminal()
                        ? List.of()
                        : liveDescendants(client, name, id, new ArrayList<>());
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("name", name);
                r.put("id", id);
                r.put("status", info.status().sqlValue());
                r.put("liveChildren", live);
                if (force) {
                    CancelOutcome outcome = client.cancel(name, id);
                    if (outcome == CancelOutcome.UNKNOWN) {
                        throw unknown(name, id);
                    }
                    r.put("outcome", outcome.name());
                }
                r.put("applied", force);
                return r;
            });
            @SuppressWarnings("unchecked")
            List<Map<String, String>> live = (List<Map<String, String>>) value.get("liveChildren");
            String children = String.join(", ", live.stream()
                    .map(c -> Output.cell(c.get("name") + "/" + c.get("id")) + " (" + c.get("status") + ")").toList());
            String text;
            if (force) {
                text = value.get("outcome").equals(CancelOutcome.CANCELLED.name())
                        ? target + ": cancelled (CANCELLED)" + (live.isEmpty()
                                ? ""
                                : "; asked its live children to cancel: " + children) + "\n"
                        : target + ": nothing changed (" + value.get("outcome") + ")\n";
            } else if (WorkflowStatus.fromSql((String) value.get("status")).isTerminal()) {
                text = target + " is " + value.get("status") + ": cancel would change nothing\n";
            } else {
                text = target + ": would cancel (preview; add --force) the " + value.get("status") + " workflow"
                        + (live.isEmpty() ? "" : " and its live children " + children) + "\n";
            }
            cli.print(spec.commandLine().getOut(), value, text);
            return 0;
        }

        /** Live children, grandchildren and so on (cancel cascades through them all), at most 1000. */
        private static List<Map<String, String>> liveDescendants(WorkflowClient client, String name, String id,
                List<Map<String, String>> out) {
            client.describe(name, id).ifPresent(d -> d.children().stream().filter(c -> !c.status().isTerminal())
                    .forEach(c -> {
                        if (out.size() < 1_000) {
                            out.add(Map.of("name", c.name(), "id", c.id(), "status", c.status().sqlValue()));
                            liveDescendants(client, c.name(), c.id(), out);
                        }
                    }));
            return out;
        }
    }

    @Command(name = "retry", description = "Revive a failed instance with a fresh attempt budget (preview without --force).")
    static final class Retry implements Callable<Integer> {
        @ParentCommand
        WorkflowsCommand parent;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "the workflow name")
        String name;

        @Parameters(index = "1", paramLabel = "ID", description = "the instance id")
        String id;

        @Option(names = "--force", description = "really retry")
        boolean force;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            String target = Output.cell(name + "/" + id);
            Map<String, Object> value = parent.withAnnouncingClient(client -> {
                WorkflowInfo info = client.describe(name, id).map(WorkflowDetails::info)
                        .orElseThrow(() -> unknown(name, id));
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("name", name);
                r.put("id", id);
                r.put("status", info.status().sqlValue());
                r.put("attempts", info.attempts());
                r.put("failure", info.failure());
                if (force) {
                    RetryOutcome outcome = client.retry(name, id);
                    if (outcome == RetryOutcome.UNKNOWN) {
                        throw unknown(name, id);
                    }
                    r.put("outcome", outcome.name());
                } else {
                    r.put("outcome", info.status() == WorkflowStatus.FAILED ? null : RetryOutcome.NOT_FAILED.name());
                }
                r.put("applied", force);
                return r;
            });
            String text;
            if (RetryOutcome.NOT_FAILED.name().equals(value.get("outcome"))) {
                text = target + " is " + value.get("status") + ", not failed: " + (force
                        ? "nothing changed"
                        : "retry would change nothing") + " (NOT_FAILED)\n";
            } else if (force) {
                text = target + ": retried with a fresh attempt budget; it resumes from its journal (RETRIED)\n";
            } else {
                text = target + ": would retry (preview; add --force) the workflow that failed after "
                        + value.get("attempts") + " attempt(s): " + Output.cell(dash(value.get("failure"))) + "\n";
            }
            cli.print(spec.commandLine().getOut(), value, text);
            return 0;
        }
    }
}
