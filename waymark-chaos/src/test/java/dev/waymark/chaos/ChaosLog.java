package dev.waymark.chaos;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The timestamped log of a chaos run (faults, notes, violations), printed and kept in a file. */
final class ChaosLog implements AutoCloseable {

    private final PrintWriter file;
    private final Map<String, Integer> faults = new TreeMap<>();
    private final List<String> lines = new ArrayList<>();

    ChaosLog(Path path) throws IOException {
        Files.createDirectories(path.getParent());
        this.file = new PrintWriter(Files.newBufferedWriter(path, StandardCharsets.UTF_8), true);
    }

    synchronized void fault(String kind, String detail) {
        faults.merge(kind, 1, Integer::sum);
        write("FAULT " + kind + ": " + detail);
    }

    synchronized void note(String text) {
        write(text);
    }

    private void write(String text) {
        String line = Instant.now() + " " + text;
        lines.add(line);
        file.println(line);
        System.out.println("[chaos] " + line);
    }

    synchronized Map<String, Integer> faults() {
        return new TreeMap<>(faults);
    }

    synchronized List<String> lines() {
        return List.copyOf(lines);
    }

    @Override
    public synchronized void close() {
        file.close();
    }
}
