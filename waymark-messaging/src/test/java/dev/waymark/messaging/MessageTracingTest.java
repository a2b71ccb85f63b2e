package dev.waymark.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.messaging.otel.MessageTracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MessageTracingTest {

    @Test
    void each_message_gets_a_consumer_span_whose_parent_comes_from_its_trace_context() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(
                        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
        InMemorySource source = new InMemorySource("s");
        source.send(Envelope.builder("traced", "{}".getBytes(StandardCharsets.UTF_8))
                .trace("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", null).build());
        source.send(Envelope.builder("untraced", "{}".getBytes(StandardCharsets.UTF_8)).build());
        ProcessingApp app = ProcessingApp.builder().processor("payments", source, Concurrency.serial(),
                MessageTracing.wrap(otel, "payments", m -> m.id().equals("untraced")
                        ? AckDecision.deadLetter(DeadLetterReason.invalid("no amount"))
                        : AckDecision.ok()))
                .build().start();
        await().atMost(Duration.ofSeconds(10)).until(() -> exporter.getFinishedSpanItems().size() == 2);
        app.stop();
        List<SpanData> spans = exporter.getFinishedSpanItems();
        SpanData traced = spans.stream().filter(s -> "traced".equals(s.getAttributes().get(
                io.opentelemetry.api.common.AttributeKey.stringKey("messaging.message.id")))).findFirst().orElseThrow();
        assertThat(traced.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(traced.getName()).isEqualTo("payments process");
        assertThat(traced.getTraceId()).isEqualTo("0af7651916cd43dd8448eb211c80319c");
        assertThat(traced.getParentSpanId()).isEqualTo("b7ad6b7169203331");
        assertThat(traced.getStatus().getStatusCode()).isEqualTo(StatusCode.OK);
        SpanData untraced = spans.stream().filter(s -> s != traced).findFirst().orElseThrow();
        assertThat(untraced.getParentSpanContext().isValid()).isFalse();
        assertThat(untraced.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(untraced.getStatus().getDescription()).isEqualTo("invalid payload: no amount");
    }

    @Test
    void the_sources_typed_attributes_are_on_the_span_and_win_over_the_runtimes() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(
                        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
        InMemorySource source = new InMemorySource("s");
        source.send(Envelope.builder("m-1", "{}".getBytes(StandardCharsets.UTF_8))
                .attributes(Attributes.builder()
                        .put("messaging.system", "acme-broker")
                        .put("acme.partition", 7L)
                        .put("acme.ratio", 0.5)
                        .put("acme.replayed", true)
                        .put("waymark.attempt", "third") // another type than the runtime's long
                        .put("messaging.message.id", 99L) // another type than the runtime's text
                        .build())
                .build());
        ProcessingApp app = ProcessingApp.builder().processor("payments", source, Concurrency.serial(),
                MessageTracing.wrap(otel, "payments", m -> AckDecision.ok())).build().start();
        await().atMost(Duration.ofSeconds(10)).until(() -> exporter.getFinishedSpanItems().size() == 1);
        app.stop();
        io.opentelemetry.api.common.Attributes span = exporter.getFinishedSpanItems().get(0).getAttributes();
        assertThat(span.get(AttributeKey.stringKey("messaging.system"))).as("the source wins").isEqualTo("acme-broker");
        assertThat(span.get(AttributeKey.longKey("acme.partition"))).isEqualTo(7L);
        assertThat(span.get(AttributeKey.doubleKey("acme.ratio"))).isEqualTo(0.5);
        assertThat(span.get(AttributeKey.booleanKey("acme.replayed"))).isTrue();
        assertThat(span.get(AttributeKey.stringKey("waymark.processor"))).isEqualTo("payments");
        assertThat(span.get(AttributeKey.stringKey("messaging.destination.name"))).isEqualTo("payments");
        assertThat(span.asMap()).as("one value per name, the source's, whatever its type")
                .containsEntry(AttributeKey.stringKey("waymark.attempt"), "third")
                .doesNotContainKey(AttributeKey.longKey("waymark.attempt"))
                .containsEntry(AttributeKey.longKey("messaging.message.id"), 99L)
                .doesNotContainKey(AttributeKey.stringKey("messaging.message.id"));
    }
}
