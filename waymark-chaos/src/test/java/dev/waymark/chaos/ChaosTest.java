package dev.waymark.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The chaos tier: {@link ChaosRun} for {@code -Dchaos.duration} (default {@code PT2M}) with seed
 * {@code -Dchaos.seed} (default random), asserting the auditor found no violation. The report is
 * printed, kept in {@code target/chaos/report.md}, and written to {@code -Dchaos.report} (a path
 * relative to the repository root) when given. A failing run prints the seed that reproduces it. A run
 * fails as well when its faults or load did not really run ({@link RunChecks}): the fault phase must
 * be long enough for every fault kind (a minute or more).
 */
@Tag("chaos")
class ChaosTest {

    static final Duration DEFAULT_DURATION = Duration.ofMinutes(2);

    @Test
    void invariants_hold_under_kills_pauses_backend_terminations_and_restarts() throws Exception {
        String seedProperty = System.getProperty("chaos.seed", "");
        long seed = seedProperty.isBlank()
                ? ThreadLocalRandom.current().nextLong()
                : Long.parseLong(seedProperty.trim());
        String durationProperty = System.getProperty("chaos.duration", "");
        Duration duration = durationProperty.isBlank() ? DEFAULT_DURATION : Duration.parse(durationProperty.trim());
        System.out.println("[chaos] seed " + seed + ", duration " + duration
                + " (reproduce with -Dchaos.seed=" + seed + " -Dchaos.duration=" + duration + ")");
        Path workDir = Path.of("target", "chaos");
        // setup and worker starts, the fault phase, the quiet period, the audit: bounded as a whole
        Duration bound = duration.plus(ChaosRun.DRAIN_TIMEOUT).plus(Duration.ofMinutes(4));
        ChaosRun.Result result = assertTimeoutPreemptively(bound, () -> new ChaosRun(seed, duration, workDir).run(),
                () -> "chaos run with seed " + seed + " did not finish within " + bound);
        System.out.println(result.markdown());
        Files.writeString(workDir.resolve("report.md"), result.markdown(), StandardCharsets.UTF_8);
        String target = System.getProperty("chaos.report", "");
        if (!target.isBlank()) {
            Path base = Path.of(System.getProperty("chaos.basedir", "."));
            Path report = base.resolve(target.trim());
            Files.createDirectories(report.toAbsolutePath().getParent());
            Files.writeString(report, result.markdown(), StandardCharsets.UTF_8);
            System.out.println("[chaos] report written to " + report.toAbsolutePath());
        }
        assertThat(result.passed()).as("chaos run with seed %d (reproduce: -Dchaos.seed=%d -Dchaos.duration=%s)"
                + " failed a check:%n%s", seed, seed, duration, result.markdown()).isTrue();
    }
}
