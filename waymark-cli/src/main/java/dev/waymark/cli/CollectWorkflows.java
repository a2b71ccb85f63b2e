package dev.waymark.cli;

import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.gc.FinishedWorkflow;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark workflows collect}: one garbage-collection pass, or its preview. */
@Command(name = "collect", description = "Delete instances that finished at least --retention ago, with their journals"
        + " and awakeables (preview without --force).")
final class CollectWorkflows implements Callable<Integer> {

    @ParentCommand
    WorkflowsCommand parent;

    @Spec
    CommandSpec spec;

    @Option(names = "--retention", required = true, converter = WaymarkCli.NonNegativeDurationConverter.class, description = "keep instances that finished less than this long ago (like 7d, 12h; 0s: none)")
    Duration retention;

    @Option(names = "--limit", defaultValue = WaymarkCli.DEFAULT_COLLECT_LIMIT, description = "most instances in this pass (1-10000)")
    int limit;

    @Option(names = "--force", description = "really delete")
    boolean force;

    @Override
    public Integer call() {
        WaymarkCli.requireLimit(spec, limit);
        Map<String, Object> value = parent.withClient(client -> {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("retention", retention.toString());
            if (force) {
                CollectResult result = client.collect(retention, limit);
                r.put("scanned", result.scanned());
                r.put("deleted", result.deleted());
                r.put("skipped", result.skipped());
            } else {
                List<FinishedWorkflow> candidates = client.collectable(retention, limit);
                r.put("candidates", candidates.stream().map(c -> Map.of("name", c.name(), "id", c.id(),
                        "status", c.status().sqlValue(), "finishedAt", c.finishedAt().toString())).toList());
            }
            r.put("applied", force);
            return r;
        });
        StringBuilder text = new StringBuilder();
        if (force) {
            text.append("deleted ").append(value.get("deleted")).append(" of ").append(value.get("scanned"))
                    .append(" finished instance(s); skipped ").append(value.get("skipped")).append('\n');
        } else {
            List<?> candidates = (List<?>) value.get("candidates");
            text.append(candidates.size()).append(" instance(s) would be deleted (preview; add --force):\n");
            for (Object c : candidates) {
                Map<?, ?> m = (Map<?, ?>) c;
                text.append("  ").append(Output.cell(m.get("name") + "/" + m.get("id"))).append("  ")
                        .append(m.get("status")).append("  finished ").append(m.get("finishedAt")).append('\n');
            }
        }
        parent.root.print(spec.commandLine().getOut(), value, text.toString());
        return 0;
    }
}
