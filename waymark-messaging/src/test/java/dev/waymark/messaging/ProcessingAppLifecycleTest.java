package dev.waymark.messaging;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Starting and stopping an app more than once, and in either order: a start happens once, a stop
 * happens once, and a stopped app never starts (as no Waymark component restarts).
 */
class ProcessingAppLifecycleTest {

    private static InMemorySource source(String name, int messages) {
        InMemorySource source = new InMemorySource(name);
        for (int i = 0; i < messages; i++) {
            source.send("k" + (i % 4), Integer.toString(i));
        }
        source.complete();
        return source;
    }

    @Test
    void a_second_and_concurrent_starts_start_nothing_more() throws Exception {
        InMemorySource serial = source("serial", 20);
        InMemorySource keyed = source("keyed", 20);
        AtomicInteger serialStarts = new AtomicInteger();
        AtomicInteger keyedStarts = new AtomicInteger();
        ProcessingApp app = ProcessingApp.builder()
                .processor("s", TestSources.countingStarts(serial, serialStarts), Concurrency.serial(),
                        m -> AckDecision.ok())
                .processor("k", TestSources.countingStarts(keyed, keyedStarts), Concurrency.orderedByKey(4),
                        m -> AckDecision.ok())
                .build();
        ExecutorService callers = Executors.newFixedThreadPool(4);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<ProcessingApp>> calls = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                calls.add(callers.submit(() -> {
                    go.await();
                    return app.start();
                }));
            }
            go.countDown();
            for (Future<ProcessingApp> call : calls) {
                assertThat(call.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isSameAs(app);
            }
        } finally {
            callers.shutdownNow();
        }
        assertThat(app.start()).as("a later call, too, returns the app").isSameAs(app);

        assertThat(app.awaitTermination(WAIT)).isTrue();
        // before: the first call started the processors and every other one threw IllegalStateException
        assertThat(serialStarts).as("each processor started once").hasValue(1);
        assertThat(keyedStarts).hasValue(1);
        assertThat(serial.decisions()).hasSize(20);
        assertThat(keyed.decisions()).hasSize(20);
        assertThat(app.stop(WAIT)).isTrue();
    }

    @Test
    void an_app_stopped_before_it_started_stops_at_once_and_never_starts() {
        InMemorySource messages = source("never", 5);
        AtomicInteger starts = new AtomicInteger();
        ProcessingApp app = ProcessingApp.builder().processor("p", TestSources.countingStarts(messages, starts),
                Concurrency.unordered(2), m -> AckDecision.ok()).build();

        // before: the stop waited for processors that never ran, the whole drain, and answered false
        boolean stopped = assertTimeoutPreemptively(WAIT, () -> app.stop(Duration.ofMinutes(10)));
        assertThat(stopped).isTrue();
        assertThat(messages.shutdowns()).as("its source is shut down, once").isEqualTo(1);
        assertThat(app.snapshot("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.STOPPED);

        assertThatThrownBy(app::start).isInstanceOf(IllegalStateException.class)
                .hasMessage("processing app [p] was stopped; a stopped app does not start again, build a new one");
        assertThat(starts).as("no processor started").hasValue(0);
        assertThat(messages.pulled()).isZero();
        assertThat(app.stop(Duration.ZERO)).as("a later stop answers for the same stop").isTrue();
    }

    @Test
    void a_started_app_once_stopped_does_not_start_again() throws Exception {
        InMemorySource messages = source("once", 10);
        AtomicInteger starts = new AtomicInteger();
        try (ProcessingApp app = ProcessingApp.builder().processor("p", TestSources.countingStarts(messages, starts),
                Concurrency.serial(), m -> AckDecision.ok()).build().start()) {
            assertThat(app.awaitTermination(WAIT)).isTrue();
            assertThat(app.stop(WAIT)).isTrue();

            assertThatThrownBy(app::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("was stopped; a stopped app does not start again");
            assertThat(starts).hasValue(1);
            assertThat(messages.decisions()).hasSize(10);
        }
    }
}
