package dev.waymark.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** The awakeable subcommands of {@code workflows}: complete-awakeable and fail-awakeable. */
final class AwakeableCommands {

    private AwakeableCommands() {}

    /** Settles an awakeable, or previews it: shared by complete-awakeable and fail-awakeable. */
    abstract static class Settle implements Callable<Integer> {
        @ParentCommand
        WorkflowsCommand parent;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "UUID", converter = WorkflowsCommand.UuidConverter.class, description = "the awakeable id (see workflows show)")
        UUID awakeable;

        @Option(names = "--force", description = "really settle it (irreversible: the first settlement wins)")
        boolean force;

        /** "complete" or "fail". */
        abstract String verb();

        /** "completed" or "failed". */
        abstract String done();

        /** What the awakeable is settled with, for the output. */
        abstract Map<String, Object> with();

        abstract AwakeableOutcome settle(WorkflowClient client);

        @Override
        public Integer call() {
            validate();
            WaymarkCli cli = parent.root;
            Map<String, Object> value = parent.withAnnouncingClient(client -> {
                AwakeableInfo state = client.awakeable(awakeable).orElseThrow(this::unknownAwakeable);
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("awakeable", awakeable.toString());
                r.put("workflow", state.workflowName() + "/" + state.workflowId());
                r.put("generation", state.generation());
                r.put("status", state.status());
                r.putAll(with());
                if (force) {
                    AwakeableOutcome outcome = settle(client);
                    if (outcome == AwakeableOutcome.UNKNOWN) {
                        throw unknownAwakeable();
                    }
                    r.put("outcome", outcome.name());
                }
                r.put("applied", force);
                return r;
            });
            String subject = "awakeable " + awakeable + " of " + Output.cell(value.get("workflow"));
            String text;
            if (force) {
                text = value.get("outcome").equals(AwakeableOutcome.SETTLED.name())
                        ? subject + ": " + done() + describeWith() + "; its workflow is woken (SETTLED)\n"
                        : subject + ": nothing changed (" + value.get("outcome") + ")\n";
            } else if (!"pending".equals(value.get("status"))) {
                text = subject + " is " + value.get("status") + ": " + verb() + " would change nothing\n";
            } else {
                text = subject + ": would " + verb() + " (preview; add --force)" + describeWith() + "\n";
            }
            cli.print(spec.commandLine().getOut(), value, text);
            return 0;
        }

        void validate() {}

        private String describeWith() {
            StringBuilder s = new StringBuilder();
            with().forEach((k, v) -> s.append(" with ").append(k).append(' ').append(Output.cell(v)));
            return s.toString();
        }

        private NotFoundException unknownAwakeable() {
            return new NotFoundException("no awakeable " + awakeable);
        }
    }

    @Command(name = "complete-awakeable", description = "Complete an awakeable with a JSON value (preview without --force).")
    static final class CompleteAwakeable extends Settle {
        @Option(names = "--value", required = true, converter = WorkflowsCommand.JsonConverter.class, description = "the value as JSON, e.g. '\"approved\"' or '{\"ok\":true}'")
        JsonNode value;

        @Override
        String verb() {
            return "complete";
        }

        @Override
        String done() {
            return "completed";
        }

        @Override
        Map<String, Object> with() {
            return Map.of("value", value);
        }

        @Override
        AwakeableOutcome settle(WorkflowClient client) {
            return client.completeAwakeable(awakeable, value);
        }
    }

    @Command(name = "fail-awakeable", description = "Fail an awakeable with a reason (preview without --force).")
    static final class FailAwakeable extends Settle {
        @Option(names = "--reason", required = true, description = "why; its await throws with this reason")
        String reason;

        @Override
        void validate() {
            if (reason.isBlank()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--reason must not be blank");
            }
        }

        @Override
        String verb() {
            return "fail";
        }

        @Override
        String done() {
            return "failed";
        }

        @Override
        Map<String, Object> with() {
            return Map.of("reason", reason);
        }

        @Override
        AwakeableOutcome settle(WorkflowClient client) {
            return client.failAwakeable(awakeable, reason);
        }
    }
}
