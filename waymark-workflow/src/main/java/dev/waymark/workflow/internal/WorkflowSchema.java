package dev.waymark.workflow.internal;

import dev.waymark.store.plumbing.SchemaModule;
import java.util.List;

/**
 * The schema waymark-workflow owns (instances, awakeables, the journal functions), migrated after the
 * store's, whose tables and functions it uses. Registered for {@code dev.waymark.store.Migrations} in
 * {@code META-INF/services}.
 */
public final class WorkflowSchema implements SchemaModule {

    /** For {@link java.util.ServiceLoader}. */
    public WorkflowSchema() {}

    @Override
    public String name() {
        return "workflow";
    }

    @Override
    public int order() {
        return 300;
    }

    @Override
    public List<String> scripts() {
        return List.of("V1__workflows.sql");
    }
}
