package dev.waymark.bench;

import java.io.Serializable;
import java.util.List;

/**
 * What one benchmark run produced: its set-up lines, its markdown body (tables), its targets, and
 * how it ended. Written by the child JVM that ran the benchmark and read back by {@link AllBenchmarks}.
 *
 * @param status how the run ended
 * @param setup lines describing the run's parameters (rounds, durations, sizes)
 * @param body the measured tables and notes, markdown
 * @param targets the targets, each with its measured value
 * @param error why the run failed or was skipped; empty when it completed
 * @param seconds wall time of the run
 */
record BenchResult(Status status, List<String> setup, String body, List<Target> targets, String error, double seconds)
        implements
            Serializable {

    /** How a benchmark run ended. */
    enum Status {
        /** Ran to the end. */
        COMPLETED,
        /** Threw, crashed or exited without a result. */
        FAILED,
        /** Killed after its time limit. */
        TIMED_OUT,
        /** Not run (not in this build). */
        SKIPPED
    }

    BenchResult {
        setup = List.copyOf(setup);
        targets = List.copyOf(targets);
    }

    /** A result with nothing measured. */
    static BenchResult without(Status status, String error, double seconds) {
        return new BenchResult(status, List.of(), "", List.of(), error, seconds);
    }

    /** How a measured value is compared with its threshold. */
    enum Comparison {
        /** The value must be at least the threshold. */
        AT_LEAST("≥"),
        /** The value must be above the threshold. */
        ABOVE(">"),
        /** The value must be at most the threshold. */
        AT_MOST("≤");

        final String symbol;

        Comparison(String symbol) {
            this.symbol = symbol;
        }

        boolean holds(double value, double threshold) {
            return switch (this) {
                case AT_LEAST -> value >= threshold;
                case ABOVE -> value > threshold;
                case AT_MOST -> value <= threshold;
            };
        }
    }

    /**
     * One target of an issue and the value this run measured for it.
     *
     * @param issue the issue that set the target, e.g. "2"
     * @param name what is compared, e.g. "Waymark / raw INSERT, 8 writers"
     * @param measured the measured value
     * @param comparison how it is compared
     * @param threshold the target value
     * @param unit appended to both numbers ("×", " s", or empty for a plain ratio)
     * @param note what else the reader should know, may be empty
     */
    record Target(String issue, String name, double measured, Comparison comparison, double threshold, String unit,
            String note) implements Serializable {

        /** Whether the measured value meets the target; NaN (not measured) never does. */
        boolean met() {
            return !Double.isNaN(measured) && comparison.holds(measured, threshold);
        }

        String thresholdText() {
            return comparison.symbol + " " + format(threshold) + unit;
        }

        String measuredText() {
            return Double.isNaN(measured) ? "—" : format(measured) + unit;
        }

        static String format(double v) {
            return String.format(java.util.Locale.ROOT, "%.2f", v);
        }
    }
}
