package dev.waymark.chaos;

import static org.awaitility.Awaitility.await;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of the chaos run's own (never the machine's service): an embedded
 * PostgreSQL (io.zonky) on a fixed data directory and port, so {@link #crashAndRestart()} (SIGKILL to
 * every server process, then a start on the same directory and port) is a real crash: the restart
 * replays the WAL (crash recovery) and clients reconnect to it.
 *
 * <p>{@code synchronous_commit} is on (io.zonky turns it off by default): a commit is acknowledged only
 * once its WAL is written, so a crash must not lose an acknowledged commit, which is what the auditor
 * checks. {@code fsync} is on too, as in production; it guards against an operating-system crash,
 * which a process kill does not cause, so it costs a little time and changes nothing the run can see.
 */
final class ChaosPostgres implements AutoCloseable {

    static final String DATABASE = "chaos";

    private final Path dataDirectory;
    private final int port;
    private EmbeddedPostgres server;

    ChaosPostgres(Path dataDirectory) throws IOException {
        this.dataDirectory = dataDirectory;
        deleteRecursively(dataDirectory);
        Files.createDirectories(dataDirectory.getParent());
        try (ServerSocket socket = new ServerSocket(0)) {
            this.port = socket.getLocalPort();
        }
        this.server = start();
        try (Connection c = DriverManager.getConnection(adminUrl()); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            throw new IOException("could not create the chaos database", e);
        }
    }

    private EmbeddedPostgres start() throws IOException {
        return EmbeddedPostgres.builder()
                .setDataDirectory(dataDirectory)
                .setCleanDataDirectory(false)
                .setPort(port)
                .setRegisterShutdownHook(false)
                .setServerConfig("max_connections", "200")
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("fsync", "on")
                .start();
    }

    String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port + "/" + DATABASE + "?user=postgres";
    }

    private String adminUrl() {
        return "jdbc:postgresql://localhost:" + port + "/postgres?user=postgres";
    }

    int port() {
        return port;
    }

    /**
     * Crashes the server: SIGKILL to the postmaster and to every process it started (backends, WAL
     * writer, checkpointer), as an out-of-memory kill of the whole server would; waits until they are
     * gone, then starts the server on the same directory and port, which runs crash recovery. Returns
     * the number of processes killed.
     */
    synchronized int crashAndRestart() throws IOException {
        long pid = Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).trim());
        ProcessHandle postmaster = ProcessHandle.of(pid)
                .orElseThrow(() -> new IOException("no postmaster process " + pid + " to kill"));
        // Stopped first, the postmaster forks no backend between the list below and the kill.
        stop(pid);
        List<ProcessHandle> processes = new ArrayList<>();
        processes.add(postmaster);
        processes.addAll(postmaster.descendants().toList()); // before the kill: orphans are re-parented
        processes.forEach(ProcessHandle::destroyForcibly); // SIGKILL (a stopped process dies of it too)
        // a server process still attached to the shared memory would make the new postmaster refuse to start
        await("PostgreSQL processes " + processes.stream().map(ProcessHandle::pid).toList() + " gone")
                .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                .until(() -> processes.stream().allMatch(ChaosPostgres::gone));
        // releases io.zonky's lock on the directory; its "pg_ctl stop" fails (logged): nothing is left to stop
        server.close();
        server = null;
        // A zombie postmaster nobody reaps still answers kill(pid, 0): its lock file would make the new
        // postmaster refuse to start. Every process of the server is dead, so the file is stale.
        Files.deleteIfExists(dataDirectory.resolve("postmaster.pid"));
        IOException last = null;
        for (int attempt = 0; attempt < 10; attempt++) {
            try {
                server = start();
                return processes.size();
            } catch (IOException e) {
                last = e; // the port may linger for a moment
                try {
                    Thread.sleep(500);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted restarting PostgreSQL", interrupted);
                }
            }
        }
        throw last;
    }

    private static void stop(long pid) throws IOException {
        Process kill = new ProcessBuilder("kill", "-STOP", Long.toString(pid)).redirectErrorStream(true).start();
        try {
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IOException("kill -STOP " + pid + " failed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted stopping the postmaster " + pid, e);
        }
    }

    /** Exited, or a zombie not yet reaped by its new parent (it holds no shared memory any more). */
    private static boolean gone(ProcessHandle p) {
        if (!p.isAlive()) {
            return true;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return true; // no /proc entry: exited
        }
    }

    @Override
    public synchronized void close() throws IOException {
        if (server != null) {
            server.close();
            server = null;
        }
        deleteRecursively(dataDirectory);
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
