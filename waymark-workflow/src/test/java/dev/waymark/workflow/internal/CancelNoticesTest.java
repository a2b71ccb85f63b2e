package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The lifetime of a cancellation notice: before, during and after the runs of its instance. */
class CancelNoticesTest {

    private static final Instances.Key KEY = new Instances.Key("order", "42");

    @Test
    void a_notice_heard_before_the_run_begins_is_seen_by_that_run() {
        CancelNotices notices = new CancelNotices();
        notices.cancelled(KEY); // a cancel right after a start: its run has not begun yet
        notices.runStarted(KEY);
        // before: the notice was dropped, as no run was under way, and the first step's action ran
        assertThat(notices.isNoticed(KEY)).isTrue();
    }

    @Test
    void a_notice_goes_when_the_last_run_of_its_instance_ends() {
        CancelNotices notices = new CancelNotices();
        notices.runStarted(KEY);
        notices.runStarted(KEY); // a new attempt begun before the old one ended
        notices.cancelled(KEY);
        notices.runEnded(KEY);
        assertThat(notices.isNoticed(KEY)).isTrue();
        notices.runEnded(KEY);
        assertThat(notices.isNoticed(KEY)).isFalse();
        assertThat(notices.size()).isZero();
    }

    @Test
    void clearing_a_stale_notice_keeps_one_heard_while_the_row_was_read() {
        CancelNotices notices = new CancelNotices();
        notices.runStarted(KEY);
        notices.cancelled(KEY); // a rumour: the run reads the row, which is not terminal ...
        CancelNotices.Notice stale = notices.notice(KEY);
        notices.cancelled(KEY); // ... while the real cancellation is heard
        notices.clear(KEY, stale);
        // before: the clear wiped the real notice too, and the next step's action ran
        assertThat(notices.isNoticed(KEY)).isTrue();
        notices.clear(KEY, notices.notice(KEY));
        assertThat(notices.isNoticed(KEY)).isFalse();
    }

    @Test
    void old_notices_of_instances_not_running_here_are_pruned_and_the_others_kept() {
        AtomicLong now = new AtomicLong();
        CancelNotices notices = new CancelNotices(now::get);
        Instances.Key runningHere = new Instances.Key("order", "running");
        notices.runStarted(runningHere);
        notices.cancelled(runningHere);
        for (int i = 0; i < CancelNotices.PRUNE_ABOVE; i++) {
            notices.cancelled(new Instances.Key("order", "elsewhere-" + i)); // running in other processes
        }
        assertThat(notices.size()).isEqualTo(CancelNotices.PRUNE_ABOVE + 1); // nothing is a minute old yet
        now.addAndGet(61_000_000_000L);
        notices.cancelled(KEY);
        assertThat(notices.size()).isEqualTo(2);
        assertThat(notices.isNoticed(runningHere)).isTrue();
        assertThat(notices.isNoticed(KEY)).isTrue();
    }
}
