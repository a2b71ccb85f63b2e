package dev.waymark.cli;

import static dev.waymark.cli.WorkflowRows.dash;
import static dev.waymark.cli.WorkflowsCommand.unknown;

import dev.waymark.workflow.status.RetryOutcome;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code waymark workflows retry}: revives a failed instance with a fresh attempt budget, or previews it. */
@Command(name = "retry", description = "Revive a failed instance with a fresh attempt budget (preview without --force).")
final class RetryWorkflow extends WorkflowInstanceCommand {
    @Option(names = "--force", description = "really retry")
    boolean force;

    @Override
    public Integer call() {
        WaymarkCli cli = parent.root;
        String target = Output.cell(name + "/" + id);
        Map<String, Object> value = parent.withAnnouncingClient(client -> {
            WorkflowInfo info = details(client).info();
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
