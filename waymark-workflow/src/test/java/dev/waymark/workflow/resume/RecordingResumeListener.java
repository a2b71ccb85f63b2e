package dev.waymark.workflow.resume;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A resume listener that keeps every event, in order, for a test to read. */
final class RecordingResumeListener implements ResumeListener {

    /** The events heard so far. */
    final List<ResumeEvent> events = new CopyOnWriteArrayList<>();

    @Override
    public void onEvent(ResumeEvent event) {
        events.add(event);
    }
}
