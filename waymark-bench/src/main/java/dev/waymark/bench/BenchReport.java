package dev.waymark.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a benchmark reports while it runs: its set-up, its markdown tables and its targets. Every
 * line is also echoed to standard output, so a benchmark's own {@code main} prints as it always did;
 * {@link AllBenchmarks} turns the collected result into a section of docs/BENCHMARKS.md.
 */
final class BenchReport {

    /** A benchmark body: measures and reports. */
    @FunctionalInterface
    interface Body {
        void run(BenchReport report) throws Exception;
    }

    private final PrintStream echo;
    private final List<String> setup = new ArrayList<>();
    private final StringBuilder body = new StringBuilder();
    private final List<BenchResult.Target> targets = new ArrayList<>();

    BenchReport(PrintStream echo) {
        this.echo = echo;
    }

    /** Runs {@code body} as a stand-alone benchmark: prints its tables, then its targets. */
    static void standalone(Body body) throws Exception {
        BenchReport report = new BenchReport(System.out);
        body.run(report);
        report.printTargets();
    }

    /** Whether this is a short smoke run ({@code -Dbench.quick=true}): one short round, fewer events. */
    static boolean quick() {
        return Boolean.getBoolean("bench.quick");
    }

    /** A line about the run's parameters (rounds, durations, sizes): printed, and shown above the tables. */
    void setup(String format, Object... args) {
        String line = String.format(Locale.ROOT, format, args);
        setup.add(line);
        echo.println(line);
    }

    /** Progress: printed only. */
    void progress(String format, Object... args) {
        echo.println(String.format(Locale.ROOT, format, args));
    }

    /** A line of the report's markdown body (a table row, a blank line). */
    void println(String line) {
        body.append(line).append('\n');
        echo.println(line);
    }

    /** A blank line of the body. */
    void println() {
        println("");
    }

    /** A formatted line of the body (numbers grouped with commas, as in the tables so far). */
    void printf(String format, Object... args) {
        String text = String.format(Locale.US, format, args);
        body.append(text);
        echo.print(text);
    }

    /**
     * Records a target of an issue with the value this run measured.
     *
     * @param issue the issue number that set the target
     * @param name what is compared
     * @param measured the measured value (NaN when it could not be measured)
     * @param comparison how it must compare with {@code threshold}
     * @param threshold the target value
     * @param unit appended to both numbers
     * @param note what else to know, may be empty
     */
    void target(String issue, String name, double measured, BenchResult.Comparison comparison, double threshold,
            String unit, String note) {
        targets.add(new BenchResult.Target(issue, name, measured, comparison, threshold, unit, note));
    }

    /** What was reported so far, as a completed run. */
    BenchResult result(double seconds) {
        return new BenchResult(BenchResult.Status.COMPLETED, setup, body.toString(), targets, "", seconds);
    }

    /** What was reported so far, as a run that failed with {@code error}. */
    BenchResult failed(String error, double seconds) {
        return new BenchResult(BenchResult.Status.FAILED, setup, body.toString(), targets, error, seconds);
    }

    private void printTargets() throws IOException {
        if (targets.isEmpty()) {
            return;
        }
        echo.println();
        echo.println("targets:");
        for (BenchResult.Target t : targets) {
            echo.printf("  issue %s, %s: %s (target %s) — %s%n", t.issue(), t.name(), t.measuredText(),
                    t.thresholdText(), t.met() ? "met" : "NOT met");
        }
        echo.flush();
    }
}
