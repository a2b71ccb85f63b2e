package dev.waymark.workflow.status;

import dev.waymark.workflow.awakeable.AwakeableInfo;
import java.util.List;

/**
 * An instance with everything an operator asks about: its current generation's journal, its
 * awakeables, its children, and its timer (a sleeping instance's {@link WorkflowInfo#wakeAfter()}).
 *
 * @param info the instance row
 * @param input the JSON text of the input it was started with (a continue-as-new's seed is the
 *     input of the {@code WorkflowStarted} entry of its generation's journal)
 * @param result the JSON text of a completed instance's result, else null
 * @param journal its current generation's journal, in order
 * @param awakeables every awakeable the instance created, newest generation first
 * @param children every instance that names it as its parent, oldest first
 */
public record WorkflowDetails(WorkflowInfo info, String input, String result, List<JournalEntry> journal,
        List<AwakeableInfo> awakeables, List<WorkflowInfo> children) {}
