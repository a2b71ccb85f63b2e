package dev.waymark.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A TCP proxy in front of a PostgreSQL server whose open connections can be frozen: their bytes
 * stop flowing both ways and nothing is closed, as when a network path dies without a FIN (a
 * half-open connection). Connections made after a freeze flow normally.
 */
public final class FreezingProxy implements AutoCloseable {

    private final String host;
    private final int port;
    private final ServerSocket server;
    private final List<Pair> pairs = new CopyOnWriteArrayList<>();
    private final CountDownLatch closed = new CountDownLatch(1);

    private static final class Pair {
        final Socket client;
        final Socket upstream;
        volatile boolean frozen;

        Pair(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }
    }

    private FreezingProxy(String host, int port) throws IOException {
        this.host = host;
        this.port = port;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("freezing-proxy-accept").start(this::acceptLoop);
    }

    /** A proxy in front of the server of {@code jdbcUrl} ({@code jdbc:postgresql://host:port/...}). */
    public static FreezingProxy inFrontOf(String jdbcUrl) throws IOException {
        String prefix = JdbcUrl.parse(jdbcUrl).prefix(); // jdbc:postgresql://host:port/
        String hostPort = prefix.substring("jdbc:postgresql://".length(), prefix.length() - 1);
        int colon = hostPort.lastIndexOf(':');
        return colon < 0
                ? new FreezingProxy(hostPort, 5432)
                : new FreezingProxy(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
    }

    /** {@code jdbcUrl} with its host and port replaced by this proxy's. */
    public String via(String jdbcUrl) {
        JdbcUrl url = JdbcUrl.parse(jdbcUrl);
        return new JdbcUrl("jdbc:postgresql://127.0.0.1:" + server.getLocalPort() + "/", url.database(), url.query())
                .toString();
    }

    /** Freezes every connection open now; returns how many. */
    public int freezeOpenConnections() {
        int n = 0;
        for (Pair p : pairs) {
            if (!p.client.isClosed()) {
                p.frozen = true;
                n++;
            }
        }
        return n;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(host, port);
                Pair pair = new Pair(client, upstream);
                pairs.add(pair);
                pump(pair, client.getInputStream(), upstream.getOutputStream());
                pump(pair, upstream.getInputStream(), client.getOutputStream());
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
            }
        }
    }

    private void pump(Pair pair, InputStream in, OutputStream out) {
        Thread.ofPlatform().daemon().name("freezing-proxy-pump").start(() -> {
            byte[] buffer = new byte[8192];
            try {
                for (int n; (n = in.read(buffer)) >= 0;) {
                    if (pair.frozen) {
                        closed.await(); // the bytes go nowhere, and nothing tells either end
                        return;
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // one side went away
            } finally {
                if (!pair.frozen) {
                    closeQuietly(pair.client);
                    closeQuietly(pair.upstream);
                }
            }
        });
    }

    /** Closes the listening socket and every connection, frozen or not. */
    @Override
    public void close() {
        closeQuietly(server);
        closed.countDown();
        for (Pair p : pairs) {
            closeQuietly(p.client);
            closeQuietly(p.upstream);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }
}
