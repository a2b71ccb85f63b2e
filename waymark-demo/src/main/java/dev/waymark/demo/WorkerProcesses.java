package dev.waymark.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Starts demo workers as JVMs of their own, relays their output, kills and stops them. */
final class WorkerProcesses implements AutoCloseable {

    /** A started worker: its label, process and pool worker id. */
    record Worker(String label, Process process, String workerId) {}

    private final PrintStream out;
    private final List<Worker> workers = new ArrayList<>();

    WorkerProcesses(PrintStream out) {
        this.out = out;
    }

    Worker start(String label, String... args) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>(List.of(java, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"), DemoWorker.class.getName()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("demo-relay-" + label).start(() -> relay(label, p, ready));
        try {
            String line = ready.get(60, TimeUnit.SECONDS);
            Worker w = new Worker(label, p, line.substring(line.indexOf(" worker ") + " worker ".length()));
            workers.add(w);
            return w;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            p.destroyForcibly();
            throw new IOException("demo worker " + label + " did not start: " + e.getMessage(), e);
        }
    }

    private void relay(String label, Process p, CompletableFuture<String> ready) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.startsWith("ready ")) {
                    ready.complete(line);
                } else {
                    out.println("      [" + label + "] " + line);
                }
            }
        } catch (IOException e) {
            // the process is gone
        }
        ready.completeExceptionally(new IOException("exited with " + (p.isAlive() ? "?" : p.exitValue())));
    }

    /** SIGKILL: no shutdown hook, no lease released. */
    void kill(Worker w) throws InterruptedException {
        w.process().destroyForcibly();
        w.process().waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        for (Worker w : workers) {
            if (w.process().isAlive()) {
                try {
                    w.process().getOutputStream().close(); // asks the worker to stop gracefully
                    if (!w.process().waitFor(Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
                        w.process().destroyForcibly();
                    }
                } catch (IOException | InterruptedException e) {
                    w.process().destroyForcibly();
                }
            }
        }
    }
}
