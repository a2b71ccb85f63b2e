package dev.waymark.kafka;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A {@link CrashingMember} in a JVM of its own, and the ids of the messages it handled (it prints each
 * before acknowledging it, so whatever it committed is here). {@link #kill()} is a real crash: SIGKILL,
 * so no commit and no LeaveGroup.
 */
final class ChildMember implements AutoCloseable {

    /** Ids ({@code topic-partition-offset}) the child handled; filled as it prints them. */
    final Set<String> handled = ConcurrentHashMap.newKeySet();
    private final Process process;
    private final Thread reader;

    private ChildMember(Process process) {
        this.process = process;
        this.reader = Thread.ofPlatform().daemon(true).name("child-member-reader").start(this::read);
    }

    /** Starts a member of {@code group} consuming {@code topic} from {@code bootstrapServers}. */
    static ChildMember start(String bootstrapServers, String group, String topic) throws IOException {
        return start(bootstrapServers, group, topic, 0);
    }

    /** As {@link #start(String, String, String)}, retrying {@code retryPercent}% of records once. */
    static ChildMember start(String bootstrapServers, String group, String topic, int retryPercent)
            throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        return new ChildMember(new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                CrashingMember.class.getName(), bootstrapServers, group, topic, Integer.toString(retryPercent))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start());
    }

    private void read() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null;) {
                if (line.startsWith("H ")) {
                    handled.add(line.substring(2));
                }
            }
        } catch (IOException e) {
            // the child is gone
        }
    }

    /**
     * Kills the child with SIGKILL and waits until it is gone and everything it printed is read.
     *
     * @throws AssertionError if it is still alive after 30 s
     */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("the child member survived SIGKILL for 30 s");
        }
        reader.join(Duration.ofSeconds(5));
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
