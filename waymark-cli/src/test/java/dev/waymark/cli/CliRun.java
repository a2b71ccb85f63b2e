package dev.waymark.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

/** The outcome of one command line, run in-process: its exit code, stdout and stderr. */
record CliRun(int code, String out, String err) {

    /** Runs {@code args} and returns what it printed and its exit code. */
    static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = WaymarkCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRun(code, out.toString(), err.toString());
    }

    /** Runs {@code args} followed by {@code more}. */
    static CliRun of(List<String> args, String... more) {
        List<String> all = new ArrayList<>(args);
        all.addAll(List.of(more));
        return of(all.toArray(String[]::new));
    }

    /** Stdout as one JSON document. */
    JsonNode json() throws Exception {
        return WaymarkCli.JSON.readTree(out);
    }

    /** Stdout as one JSON document per line. */
    List<JsonNode> jsonLines() throws Exception {
        List<JsonNode> lines = new ArrayList<>();
        for (String line : out.lines().toList()) {
            lines.add(WaymarkCli.JSON.readTree(line));
        }
        return lines;
    }
}
