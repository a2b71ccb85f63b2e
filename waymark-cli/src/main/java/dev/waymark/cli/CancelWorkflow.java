package dev.waymark.cli;

import static dev.waymark.cli.WorkflowsCommand.unknown;

import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code waymark workflows cancel}: cancels an instance and its live descendants, or previews it. */
@Command(name = "cancel", description = "Cancel an instance and its live children (preview without --force).")
final class CancelWorkflow extends WorkflowInstanceCommand {
    @Option(names = "--force", description = "really cancel")
    boolean force;

    @Override
    public Integer call() {
        WaymarkCli cli = parent.root;
        String target = Output.cell(name + "/" + id);
        Map<String, Object> value = parent.withAnnouncingClient(client -> {
            WorkflowInfo info = details(client).info();
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
