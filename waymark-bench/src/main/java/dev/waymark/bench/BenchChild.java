package dev.waymark.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs one benchmark in a JVM of its own for {@link AllBenchmarks} and writes its {@link BenchResult}
 * to a file: {@code BenchChild <benchmark class> <result file>}. A benchmark with a
 * {@code static void run(BenchReport)} reports structured tables and targets; one with only a
 * {@code main} (a benchmark not yet adapted) is run through it and its printed output becomes the
 * section's body, with no targets evaluated.
 */
final class BenchChild {

    private BenchChild() {}

    public static void main(String[] args) throws IOException {
        String className = args[0];
        Path out = Path.of(args[1]);
        long start = System.nanoTime();
        BenchResult result;
        PrintStream console = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        BenchReport report = new BenchReport(console);
        try {
            Class<?> type = Class.forName(className);
            Method run = findRun(type);
            if (run != null) {
                run.setAccessible(true);
                run.invoke(null, report);
                result = report.result(seconds(start));
            } else {
                Method main = type.getMethod("main", String[].class);
                System.setOut(new PrintStream(new Tee(console, captured), true, StandardCharsets.UTF_8));
                try {
                    main.invoke(null, (Object) new String[0]);
                } finally {
                    System.setOut(console);
                }
                result = new BenchResult(BenchResult.Status.COMPLETED, java.util.List.of(),
                        captured.toString(StandardCharsets.UTF_8), java.util.List.of(),
                        "ran through its main (no run(BenchReport) yet): its printed output is shown as is and its"
                                + " targets are not evaluated",
                        seconds(start));
            }
        } catch (Throwable e) {
            Throwable cause = e instanceof InvocationTargetException ite && ite.getCause() != null ? ite.getCause() : e;
            cause.printStackTrace();
            BenchResult partial = report.failed(describe(cause), seconds(start));
            if (captured.size() > 0) {
                partial = new BenchResult(BenchResult.Status.FAILED, partial.setup(),
                        partial.body() + captured.toString(StandardCharsets.UTF_8), partial.targets(), partial.error(),
                        partial.seconds());
            }
            result = partial;
        }
        try (ObjectOutputStream o = new ObjectOutputStream(Files.newOutputStream(out))) {
            o.writeObject(result);
        }
        System.out.flush();
        // Benchmarks may leave non-daemon threads behind (peers' executors): end the JVM explicitly.
        System.exit(0);
    }

    private static Method findRun(Class<?> type) {
        try {
            return type.getDeclaredMethod("run", BenchReport.class);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** The exception and the first frames of its stack, and its root cause. */
    static String describe(Throwable e) {
        StringWriter w = new StringWriter();
        e.printStackTrace(new PrintWriter(w));
        String[] lines = w.toString().split("\n");
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(lines.length, 6); i++) {
            b.append(lines[i].strip()).append('\n');
        }
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root != e) {
            b.append("root cause: ").append(root).append('\n');
        }
        return b.toString().strip();
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }

    /** Writes to two streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream a;
        private final OutputStream b;

        Tee(OutputStream a, OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public void write(int c) throws IOException {
            a.write(c);
            b.write(c);
        }

        @Override
        public void write(byte[] bytes, int off, int len) throws IOException {
            a.write(bytes, off, len);
            b.write(bytes, off, len);
        }

        @Override
        public void flush() throws IOException {
            a.flush();
            b.flush();
        }
    }
}
