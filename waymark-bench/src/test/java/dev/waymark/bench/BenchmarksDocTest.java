package dev.waymark.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.bench.BenchResult.Comparison;
import dev.waymark.bench.BenchResult.Status;
import dev.waymark.bench.BenchResult.Target;
import dev.waymark.bench.BenchmarksDoc.Declared;
import dev.waymark.bench.BenchmarksDoc.Entry;
import dev.waymark.bench.BenchmarksDoc.Section;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The renderer of docs/BENCHMARKS.md, on made-up results: runs no benchmark. */
class BenchmarksDocTest {

    private static final BenchmarksDoc.Run RUN = new BenchmarksDoc.Run("2026-11-30 10:00 UTC", "mvn …",
            BenchmarksDoc.rows("CPU", "2 cores", "PostgreSQL settings", "`synchronous_commit=on`"), 17.25, false);

    private static Entry entry(String key, String className, Declared... declared) {
        return new Entry(key, key, className, List.of(declared), className == null ? "measured by the tests" : "");
    }

    @Test
    void targets_are_marked_met_or_not_met_from_the_measured_values() {
        BenchResult r = new BenchResult(Status.COMPLETED, List.of("3 rounds"), "| a | b |\n|---|---|\n| 1 | 2 |\n",
                List.of(new Target("2", "Waymark / raw, 8 writers", 0.80, Comparison.AT_LEAST, 0.7, "", ""),
                        new Target("2", "Waymark / counter, 8 writers", 2.93, Comparison.AT_LEAST, 3, "", "noisy"),
                        new Target("4", "failover, slowest", 5.6, Comparison.AT_MOST, 6, " s", "")),
                "", 120);
        String doc = BenchmarksDoc.render(RUN, List.of(new Section(entry("append", "x.AppendBenchmark"), r)),
                key -> key.equals("intro") ? "Intro." : "## Appends\n\nProse before.\n\n{{results}}\n\nProse after.");

        assertThat(doc).contains("| 2 | `AppendBenchmark` | Waymark / raw, 8 writers ≥ 0.70 | 0.80 | **met** |")
                .contains(
                        "| 2 | `AppendBenchmark` | Waymark / counter, 8 writers ≥ 3.00 | 2.93 | **not met** (noisy) |")
                .contains("| 4 | `AppendBenchmark` | failover, slowest ≤ 6.00 s | 5.60 s | **met** |")
                .contains("| CPU | 2 cores |")
                .contains("17.3 minutes")
                .contains("Prose before.\n\n### Measured in this run")
                .contains("| 1 | 2 |")
                .contains("Set-up: 3 rounds. Took 120 s.")
                .endsWith("Prose after.\n");
        assertThat(doc.indexOf("## Targets")).isLessThan(doc.indexOf("## Appends"));
    }

    @Test
    void skipped_failed_and_static_sections_say_why_their_targets_are_not_measured() {
        List<Section> sections = new ArrayList<>();
        sections.add(new Section(entry("kafka", "x.KafkaBenchmark", new Declared("8", "serial / raw ≥ 0.80", "—")),
                BenchResult.without(Status.SKIPPED, "not in this build: x.KafkaBenchmark is not on the class path.",
                        0)));
        sections.add(new Section(entry("shard", "x.ShardBenchmark", new Declared("4", "4 / 1 ≥ 3.00×", "—")),
                new BenchResult(Status.FAILED, List.of(), "| partial |\n",
                        List.of(new Target("4", "4 / 1", 3.2, Comparison.AT_LEAST, 3, "×", "")),
                        "java.lang.IllegalStateException: boom", 50)));
        sections.add(new Section(entry("wf", "x.WorkflowBenchmark", new Declared("5", "Waymark / raw ≥ 0.60", "—")),
                BenchResult.without(Status.TIMED_OUT, "killed after 30 minutes", 1800)));
        sections.add(new Section(entry("recovery", null, new Declared("6", "recovery ≤ 2.25 s", "1.83 s")), null));
        String doc = BenchmarksDoc.render(RUN, sections, key -> key.equals("recovery")
                ? "## Workflow crash recovery and wake-up (measured by the tests)\n\nStatic."
                : "## " + key + "\n\n{{results}}");

        assertThat(doc)
                .contains("| 8 | `KafkaBenchmark` | serial / raw ≥ 0.80 | — | not measured: not in this build:")
                .contains("*Not run: not in this build: x.KafkaBenchmark is not on the class path.*")
                .contains("| 4 | `ShardBenchmark` | 4 / 1 ≥ 3.00× | 3.20× | **met** |")
                .contains(
                        "| 4 | `ShardBenchmark` | the rest of this benchmark's targets | — | not measured: the benchmark failed")
                .contains("**Failed in this run** after 50 s")
                .contains("java.lang.IllegalStateException: boom")
                .contains("| partial |")
                .contains(
                        "| 5 | `WorkflowBenchmark` | Waymark / raw ≥ 0.60 | — | not measured: the benchmark ran past its time limit")
                .contains(
                        "| 6 | recovery | recovery ≤ 2.25 s | 1.83 s | not measured by this command: measured by the tests |")
                .contains("## Workflow crash recovery and wake-up (measured by the tests)\n\nStatic.");
    }

    @Test
    void every_entry_has_a_template_and_the_recovery_section_is_kept() {
        assertThat(AllBenchmarks.ENTRIES).hasSizeGreaterThanOrEqualTo(7);
        for (AllBenchmarks.Item item : AllBenchmarks.ENTRIES) {
            String template = AllBenchmarks.template(item.entry().key());
            assertThat(template).startsWith("## ");
            if (!item.entry().isStatic()) {
                assertThat(template).as(item.entry().key()).contains(BenchmarksDoc.RESULTS);
            }
        }
        assertThat(AllBenchmarks.template("workflow-recovery"))
                .contains("## Workflow crash recovery and wake-up (measured by the tests)");
        assertThat(AllBenchmarks.template("intro")).isNotBlank();
    }

    @Test
    void the_repository_root_is_the_directory_whose_pom_lists_waymark_bench(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("pom.xml"), "<modules><module>waymark-bench</module></modules>");
        Path module = Files.createDirectories(dir.resolve("waymark-bench"));
        Files.writeString(module.resolve("pom.xml"), "<artifactId>waymark-bench</artifactId>");
        assertThat(AllBenchmarks.repositoryRoot(module)).isEqualTo(dir);
    }
}
