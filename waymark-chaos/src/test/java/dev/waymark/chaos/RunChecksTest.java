package dev.waymark.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A chaos run whose faults or load did not run fails (its invariants would hold trivially). */
class RunChecksTest {

    private static Map<String, Integer> everyKind(int each) {
        Map<String, Integer> faults = new LinkedHashMap<>();
        for (FaultDriver.Kind k : FaultDriver.Kind.values()) {
            faults.put(k.name(), each);
        }
        return faults;
    }

    @Test
    void a_failed_fault_driver_fails_the_run() {
        assertThat(RunChecks.faultDriver(null).held()).isTrue();
        Auditor.Check failed = RunChecks.faultDriver(new IOException("no postmaster process 42 to kill"));
        assertThat(failed.held()).isFalse();
        assertThat(failed.detail()).isEqualTo("failed: java.io.IOException: no postmaster process 42 to kill");
    }

    @Test
    void too_few_faults_or_a_kind_never_injected_fails_the_run() {
        Duration twoMinutes = Duration.ofMinutes(2);
        assertThat(RunChecks.minimumFaults(twoMinutes)).isEqualTo(6);
        assertThat(RunChecks.minimumFaults(Duration.ofSeconds(30))).isEqualTo(FaultDriver.Kind.values().length);
        assertThat(RunChecks.faultsInjected(everyKind(2), twoMinutes).held()).isTrue();

        assertThat(RunChecks.faultsInjected(Map.of(), twoMinutes).held()).isFalse();
        Duration threeMinutes = Duration.ofMinutes(3);
        assertThat(RunChecks.faultsInjected(everyKind(1), threeMinutes).detail()).isEqualTo("6 injected, every kind");
        assertThat(RunChecks.faultsInjected(everyKind(1), threeMinutes).held()).isFalse(); // 6 < 9
        Map<String, Integer> noRestart = everyKind(3);
        noRestart.remove(FaultDriver.Kind.RESTART_POSTGRES.name());
        Auditor.Check missing = RunChecks.faultsInjected(noRestart, twoMinutes);
        assertThat(missing.held()).isFalse();
        assertThat(missing.detail()).isEqualTo("15 injected; never injected: [RESTART_POSTGRES]");
    }

    @Test
    void a_load_that_committed_nothing_of_one_kind_fails_the_run() {
        assertThat(RunChecks.load(1092, 122, 534, 27).held()).isTrue();
        assertThat(RunChecks.load(0, 122, 534, 27).held()).isFalse();
        assertThat(RunChecks.load(1092, 0, 534, 27).held()).isFalse();
        assertThat(RunChecks.load(1092, 122, 27, 27).held()).isFalse(); // no valid record
        assertThat(RunChecks.load(1092, 122, 534, 0).held()).isFalse();
        assertThat(RunChecks.load(0, 0, 0, 0).detail())
                .isEqualTo("0 events, 0 workflows, 0 valid and 0 poison records");
    }
}
