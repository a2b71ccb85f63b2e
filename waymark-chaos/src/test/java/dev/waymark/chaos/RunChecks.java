package dev.waymark.chaos;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The checks that a chaos run really ran its faults and its load. The auditor's invariants hold
 * trivially on a system that was never disturbed or never given work, so a run without them passes
 * nothing: the fault driver must not have failed, at least {@link #minimumFaults} faults must have
 * been injected with every {@link FaultDriver.Kind} among them, and the load must have committed
 * events, workflow starts and Kafka records (valid and poison).
 */
final class RunChecks {

    /** One fault per this much of the fault phase at least (a 2-minute phase injects about 14). */
    static final Duration FAULT_EVERY_AT_MOST = Duration.ofSeconds(20);

    private RunChecks() {}

    /** The least number of faults a fault phase of {@code duration} must inject: one per 20 s, and every kind. */
    static int minimumFaults(Duration duration) {
        return (int) Math.max(FaultDriver.Kind.values().length,
                duration.toMillis() / FAULT_EVERY_AT_MOST.toMillis());
    }

    static Auditor.Check faultDriver(Throwable failure) {
        return new Auditor.Check("faults: the fault driver ran the whole fault phase without failing", failure == null,
                failure == null ? "ran until stopped" : "failed: " + failure);
    }

    static Auditor.Check faultsInjected(Map<String, Integer> faults, Duration duration) {
        int minimum = minimumFaults(duration);
        int total = faults.values().stream().mapToInt(Integer::intValue).sum();
        List<String> missing = new ArrayList<>();
        for (FaultDriver.Kind k : FaultDriver.Kind.values()) {
            if (faults.getOrDefault(k.name(), 0) == 0) {
                missing.add(k.name());
            }
        }
        return new Auditor.Check("faults: at least " + minimum + " injected (one per " + FAULT_EVERY_AT_MOST.toSeconds()
                + " s of the " + duration + " phase), every kind at least once", total >= minimum && missing.isEmpty(),
                total + " injected" + (missing.isEmpty() ? ", every kind" : "; never injected: " + missing));
    }

    static Auditor.Check load(long appended, long workflowsStarted, long recordsAcked, long poisonAcked) {
        return new Auditor.Check("load: events appended, workflows started, valid and poison Kafka records"
                + " acknowledged",
                appended > 0 && workflowsStarted > 0 && recordsAcked - poisonAcked > 0 && poisonAcked > 0,
                appended + " events, " + workflowsStarted + " workflows, " + (recordsAcked - poisonAcked)
                        + " valid and " + poisonAcked + " poison records");
    }
}
