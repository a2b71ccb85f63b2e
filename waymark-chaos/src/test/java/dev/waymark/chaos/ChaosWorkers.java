package dev.waymark.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The worker JVMs of a chaos run: slot {@code i} always holds one live process (after a SIGKILL
 * the slot is restarted with a new JVM). Each process's output goes to {@code <logDir>/<label>-<n>.log}.
 */
final class ChaosWorkers implements AutoCloseable {

    /** A running worker JVM. */
    record Worker(int slot, String label, Process process, long pid, String workerId) {}

    private final String jdbcUrl;
    private final String bootstrap;
    private final String topic;
    private final Path logDir;
    private final Worker[] slots;
    private final List<Path> logs = new ArrayList<>();
    private final AtomicInteger generation = new AtomicInteger();
    /** Per worker label, the statement of the lease transaction it holds open once armed. */
    private final java.util.Map<String, CompletableFuture<String>> windows = new java.util.concurrent.ConcurrentHashMap<>();

    ChaosWorkers(int count, String jdbcUrl, String bootstrap, String topic, Path logDir) throws IOException {
        this.jdbcUrl = jdbcUrl;
        this.bootstrap = bootstrap;
        this.topic = topic;
        this.logDir = logDir;
        this.slots = new Worker[count];
        Files.createDirectories(logDir);
    }

    int size() {
        return slots.length;
    }

    synchronized Worker get(int slot) {
        return slots[slot];
    }

    synchronized List<Path> logs() {
        return List.copyOf(logs);
    }

    /** Starts a JVM in {@code slot} and waits until it prints its ready line. */
    Worker start(int slot) throws IOException, InterruptedException {
        String label = "w" + slot + "-" + generation.incrementAndGet();
        Path log = logDir.resolve(label + ".log");
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = List.of(java, "-Xmx200m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka=error", // the client's reconnect noise during broker restarts
                "-cp", System.getProperty("java.class.path"), ChaosWorker.class.getName(),
                jdbcUrl, label, bootstrap, topic);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("chaos-relay-" + label).start(() -> relay(p, log, ready, label));
        synchronized (this) {
            logs.add(log);
        }
        try {
            String line = ready.get(90, TimeUnit.SECONDS);
            Worker w = new Worker(slot, label, p, p.pid(), line.substring(line.indexOf(" worker ") + 8));
            synchronized (this) {
                slots[slot] = w;
            }
            return w;
        } catch (ExecutionException | TimeoutException e) {
            p.destroyForcibly();
            throw new IOException("chaos worker " + label + " did not start (see " + log + "): " + e.getMessage(), e);
        }
    }

    private void relay(Process p, Path log, CompletableFuture<String> ready, String label) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter w = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true)) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("ready ")) {
                    ready.complete(line);
                }
                CompletableFuture<String> window = windows.get(label);
                if (line.startsWith("WINDOW ") && window != null) {
                    window.complete(line.substring(7));
                }
                w.println(line);
            }
        } catch (IOException e) {
            // the process is gone
        }
        ready.completeExceptionally(new IOException("exited with " + (p.isAlive() ? "?" : p.exitValue())));
    }

    /** SIGKILL: no shutdown hook runs, no lease is released. */
    void kill(int slot) throws InterruptedException {
        Worker w = get(slot);
        w.process().destroyForcibly();
        w.process().waitFor(30, TimeUnit.SECONDS);
    }

    /**
     * Asks the worker of {@code slot} to hold its next lease transaction open until {@code release}
     * exists, and waits up to {@code within} for it to be inside one; returns the statement it holds,
     * or null when none came (create {@code release} either way once done).
     */
    String freezeInTransaction(int slot, Path release, java.time.Duration within) throws IOException,
            InterruptedException {
        Worker w = get(slot);
        CompletableFuture<String> window = new CompletableFuture<>();
        windows.put(w.label(), window);
        java.io.OutputStream in = w.process().getOutputStream();
        in.write(("arm " + release.toAbsolutePath() + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
        try {
            return window.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return null;
        }
    }

    /** A fresh path for a release file of {@code slot}'s worker. */
    Path releaseFile(int slot) {
        return logDir.resolve(get(slot).label() + "-release-" + System.nanoTime());
    }

    /** SIGSTOP ({@code stop = true}) or SIGCONT. */
    void signal(int slot, boolean stop) throws IOException, InterruptedException {
        Worker w = get(slot);
        Process kill = new ProcessBuilder("kill", stop ? "-STOP" : "-CONT", Long.toString(w.pid()))
                .redirectErrorStream(true).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill " + (stop ? "-STOP " : "-CONT ") + w.pid() + " failed");
        }
    }

    /** Makes sure every slot runs a live, continued JVM (after the faults stop). */
    void ensureAllRunning() throws IOException, InterruptedException {
        for (int slot = 0; slot < slots.length; slot++) {
            Worker w = get(slot);
            if (w == null || !w.process().isAlive()) {
                start(slot);
            } else {
                signal(slot, false);
            }
        }
    }

    @Override
    public void close() {
        for (int slot = 0; slot < slots.length; slot++) {
            Worker w = get(slot);
            if (w == null || !w.process().isAlive()) {
                continue;
            }
            try {
                signal(slot, false);
                w.process().getOutputStream().close(); // asks the worker to stop gracefully
            } catch (IOException | InterruptedException e) {
                w.process().destroyForcibly();
            }
        }
        for (int slot = 0; slot < slots.length; slot++) {
            Worker w = get(slot);
            if (w == null) {
                continue;
            }
            try {
                if (!w.process().waitFor(20, TimeUnit.SECONDS)) {
                    w.process().destroyForcibly();
                }
            } catch (InterruptedException e) {
                w.process().destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
