package dev.waymark.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.core.RetryPolicy;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The app's builder: named defaults, one INFO line with the effective configuration, no silent nulls. */
class ProcessingAppConfigTest {

    @Test
    void build_logs_the_effective_configuration_in_one_line() {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.err; // slf4j-simple writes to the System.err of the moment
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        RetryPolicy retry = RetryPolicy.fixed(RetryPolicy.UNLIMITED, Duration.ofMillis(250));
        try {
            ProcessingApp.builder().processor("orders", new InMemorySource("orders"), Concurrency.orderedByKey(4),
                    m -> AckDecision.ok()).inboxSize(7).retry(retry).build();
        } finally {
            System.setErr(original);
        }
        List<String> lines = captured.toString(StandardCharsets.UTF_8).lines()
                .filter(l -> l.contains("waymark processing app:")).toList();
        assertThat(lines).singleElement().satisfies(line -> assertThat(line).contains("INFO")
                .contains("processors=[orders (orderedByKey(4), InMemorySource)]").contains("inboxSize=7")
                .contains("failureStrategy=" + ProcessingApp.DEFAULT_FAILURE_STRATEGY)
                .contains("retry=" + retry).contains("listener=none"));
    }

    @Test
    void a_null_listener_is_refused_instead_of_meaning_none() {
        // before: listener(null) silently meant ProcessorListener.NONE, where every other null is an error
        assertThatThrownBy(() -> ProcessingApp.builder().listener(null)).isInstanceOf(MessagingConfigException.class)
                .hasMessage("listener must not be null (ProcessorListener.NONE for none)");
    }
}
