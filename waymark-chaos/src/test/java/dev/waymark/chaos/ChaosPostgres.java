package dev.waymark.chaos;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of the chaos run's own (never the machine's service): an embedded
 * PostgreSQL (io.zonky) on a fixed data directory and port, so {@link #restart()} (a fast shutdown,
 * then a start on the same directory and port) is a real server restart that clients reconnect to.
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
                .setServerConfig("fsync", "off")
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

    /** Stops the server (fast shutdown: clients are disconnected) and starts it on the same directory and port. */
    synchronized void restart() throws IOException {
        server.close();
        server = null;
        IOException last = null;
        for (int attempt = 0; attempt < 10; attempt++) {
            try {
                server = start();
                return;
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
