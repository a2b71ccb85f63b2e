package dev.waymark.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README's quick-start snippets are the code the tests run: every fragment of every Java block
 * of the quick start (the parts between {@code ...} lines) appears, up to whitespace, in
 * {@code ReadmeExamples} or in the Kafka module's {@code ReadmeKafkaExampleTest}.
 */
class ReadmeSnippetsTest {

    private static final Path ROOT = Path.of("..");

    @Test
    void every_quick_start_snippet_is_code_that_runs() throws IOException {
        String sources = squash(Files.readString(ROOT.resolve(
                "waymark-examples/src/main/java/dev/waymark/examples/ReadmeExamples.java")))
                + "\n" + squash(Files.readString(ROOT.resolve(
                        "waymark-kafka/src/test/java/dev/waymark/kafka/ReadmeKafkaExampleTest.java")));
        List<String> fragments = quickStartFragments(Files.readAllLines(ROOT.resolve("README.md")));
        assertThat(fragments).hasSizeGreaterThanOrEqualTo(6);
        assertThat(fragments).filteredOn(f -> !sources.contains(squash(f)))
                .as("README quick-start fragments found in neither ReadmeExamples nor ReadmeKafkaExampleTest")
                .isEmpty();
    }

    /** The Java blocks between "## Quick start" and the next level-2 heading, cut at "..." lines. */
    private static List<String> quickStartFragments(List<String> lines) {
        List<String> fragments = new ArrayList<>();
        boolean inSection = false;
        boolean inBlock = false;
        StringBuilder current = new StringBuilder();
        for (String line : lines) {
            if (line.startsWith("## ")) {
                inSection = line.equals("## Quick start");
            } else if (inSection && line.equals("```java")) {
                inBlock = true;
            } else if (inBlock && (line.equals("```") || line.strip().equals("..."))) {
                if (!current.toString().isBlank()) {
                    fragments.add(current.toString());
                }
                current.setLength(0);
                inBlock = !line.equals("```");
            } else if (inBlock) {
                current.append(line).append('\n');
            }
        }
        return fragments;
    }

    private static String squash(String text) {
        return text.replaceAll("\\s+", "");
    }
}
