package dev.waymark.cli;

import static dev.waymark.cli.WorkflowRows.compact;
import static dev.waymark.cli.WorkflowRows.dash;
import static dev.waymark.cli.WorkflowRows.text;

import dev.waymark.cli.Output.StoredJson;
import dev.waymark.cli.WorkflowRows.AwakeableRow;
import dev.waymark.cli.WorkflowRows.EntryRow;
import dev.waymark.cli.WorkflowRows.Row;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.status.JournalEntry;
import dev.waymark.workflow.status.WorkflowDetails;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

/** {@code waymark workflows show}: one instance with its journal, awakeables, timer and children. */
@Command(name = "show", description = "One instance with its journal, awakeables, timer and children.")
final class ShowWorkflow extends WorkflowInstanceCommand {
    @Override
    public Integer call() {
        WaymarkCli cli = parent.root;
        WorkflowDetails d = parent.withClient(this::details);
        Row info = WorkflowRows.row(d.info());
        List<EntryRow> journal = d.journal().stream().map(ShowWorkflow::entry).toList();
        List<AwakeableRow> awakeables = d.awakeables().stream().map(ShowWorkflow::awakeable).toList();
        List<Row> children = d.children().stream().map(WorkflowRows::row).toList();
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
