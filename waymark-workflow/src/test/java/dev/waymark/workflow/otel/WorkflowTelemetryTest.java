package dev.waymark.workflow.otel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.micrometer.WorkflowMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A span per run and per fresh step; run and step meters. */
class WorkflowTelemetryTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    @Test
    void a_run_makes_one_span_with_a_child_span_per_fresh_step_and_counts_its_steps() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(
                        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WorkflowRegistry workflows = new WorkflowRegistry().register("traced", String.class, String.class,
                (ctx, in) -> ctx.step("a", String.class, () -> "A") + ctx.step("b", String.class, () -> "B"));
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            store.migrate();
            try (WorkflowEngine engine = WorkflowEngine.builder(store, workflows)
                    .listener(WorkflowListener.of(new WorkflowTracing(otel), new WorkflowMetrics(registry))).build()) {
                assertThat(engine.start("traced", "t-1", "x", String.class).await(Duration.ofSeconds(20)))
                        .isEqualTo("AB");
            }
        }
        List<SpanData> spans = exporter.getFinishedSpanItems();
        SpanData run = spans.stream().filter(s -> s.getName().equals("workflow traced")).findFirst().orElseThrow();
        assertThat(run.getAttributes().asMap().toString()).contains("waymark.workflow.id=t-1", "completed");
        assertThat(spans).filteredOn(s -> s.getName().startsWith("step ")).extracting(SpanData::getName)
                .containsExactly("step a", "step b");
        assertThat(spans).filteredOn(s -> s.getName().startsWith("step "))
                .allSatisfy(s -> assertThat(s.getParentSpanId()).isEqualTo(run.getSpanId()));
        assertThat(registry.get("waymark.workflow.steps.executed").counter().count()).isEqualTo(2);
        assertThat(registry.get("waymark.workflow.runs").tag("outcome", "completed").counter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.workflow.active").gauge().value()).isZero();
    }
}
