package dev.waymark.cli;

import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.status.WorkflowDetails;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** What the {@code workflows} subcommands about one instance (show, cancel, retry) share: its name and id. */
abstract class WorkflowInstanceCommand implements Callable<Integer> {
    @ParentCommand
    WorkflowsCommand parent;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "NAME", description = "the workflow name")
    String name;

    @Parameters(index = "1", paramLabel = "ID", description = "the instance id")
    String id;

    /** The instance as {@code client} describes it; a {@link NotFoundException} (exit code 5) when there is none. */
    WorkflowDetails details(WorkflowClient client) {
        return client.describe(name, id).orElseThrow(() -> WorkflowsCommand.unknown(name, id));
    }
}
