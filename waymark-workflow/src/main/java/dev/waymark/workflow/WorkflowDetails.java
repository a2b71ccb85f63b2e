package dev.waymark.workflow;

import java.util.List;

/**
 * An instance with everything an operator asks about: its current generation's journal, its
 * awakeables, its children, and its timer (a sleeping instance's {@link WorkflowInfo#wakeAfter()}).
 */
public record WorkflowDetails(WorkflowInfo info, String input, String result, List<JournalEntry> journal,
        List<AwakeableInfo> awakeables, List<WorkflowInfo> children) {}
