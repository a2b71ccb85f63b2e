package dev.waymark.subscription;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Captures what slf4j-simple logs (it writes to the {@code System.err} of the moment) while a body
 * runs; the text is echoed to the real {@code System.err} afterwards.
 */
public final class LogCapture {

    /** A body that may throw. */
    public interface Body {
        /** Runs. */
        void run() throws Exception;
    }

    private LogCapture() {}

    /** Runs {@code body} and returns the lines logged meanwhile. */
    public static List<String> lines(Body body) throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            body.run();
        } finally {
            System.setErr(original);
        }
        String text = captured.toString(StandardCharsets.UTF_8);
        original.print(text);
        return text.lines().toList();
    }
}
