package dev.waymark.cli;

import static dev.waymark.cli.WorkflowRows.dash;

import dev.waymark.cli.WorkflowRows.Row;
import dev.waymark.workflow.WorkflowQuery;
import dev.waymark.workflow.status.WorkflowStatus;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark workflows list}: instances by (name, id), a page at a time. */
@Command(name = "list", description = "Workflow instances by (name, id), optionally of one status or name.")
final class ListWorkflows implements Callable<Integer> {
    @ParentCommand
    WorkflowsCommand parent;

    @Spec
    CommandSpec spec;

    @Option(names = "--status", converter = WorkflowsCommand.StatusConverter.class, completionCandidates = WorkflowsCommand.StatusCandidates.class, description = "only this status: ${COMPLETION-CANDIDATES}")
    WorkflowStatus status;

    @Option(names = "--name", description = "only workflows of this name")
    String name;

    @Option(names = "--after", description = "start after this instance, given as name/id")
    String after;

    @Option(names = "--limit", defaultValue = WaymarkCli.DEFAULT_LIST_LIMIT, description = "at most this many, 1-10000 (default: ${DEFAULT-VALUE})")
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
                .map(WorkflowRows::row).toList();
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
