package dev.waymark.store.internal;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The application_name of a store handle's LISTEN connection, visible in pg_stat_activity: the
 * application's own name with Waymark's role added, so that an operator can tell which process holds
 * it.
 */
public final class ListenerNames {

    /**
     * Waymark's role in the application_name of the LISTEN connection: the whole name when the pool
     * set none (or pgjdbc's default), else appended to the application's name as
     * {@code <application>/waymark-listener} (see {@link #listenerApplicationName}).
     */
    public static final String LISTENER_APPLICATION_NAME = "waymark-listener";

    /** pgjdbc's application_name when the application set none: not the application's name. */
    private static final String DRIVER_DEFAULT_APPLICATION_NAME = "PostgreSQL JDBC Driver";
    /** Postgres keeps the first 63 bytes of an application_name. */
    private static final int MAX_APPLICATION_NAME_BYTES = 63;

    private ListenerNames() {}

    /** Keeps the application's name on the LISTEN connection and adds Waymark's role to it. */
    static void name(Connection connection) throws SQLException {
        String current;
        try (Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SHOW application_name")) {
            current = rs.next() ? rs.getString(1) : null;
        }
        try (PreparedStatement set = connection.prepareStatement("SELECT set_config('application_name', ?, false)")) {
            set.setString(1, listenerApplicationName(current));
            set.execute();
        }
    }

    /**
     * The LISTEN connection's application_name for a connection named {@code application}: the role
     * alone when the application set no name, else {@code <application>/waymark-listener}, the
     * application's part shortened so that the role survives Postgres's 63-byte limit.
     */
    public static String listenerApplicationName(String application) {
        String suffix = "/" + LISTENER_APPLICATION_NAME;
        if (application == null || application.isBlank() || application.equals(DRIVER_DEFAULT_APPLICATION_NAME)
                || application.equals(LISTENER_APPLICATION_NAME)) {
            return LISTENER_APPLICATION_NAME;
        }
        if (application.endsWith(suffix)) {
            return application; // a pooled connection named before (RESET failed on a broken close)
        }
        StringBuilder app = new StringBuilder();
        int bytes = 0;
        int room = MAX_APPLICATION_NAME_BYTES - suffix.length();
        for (int i = 0; i < application.length();) {
            int cp = application.codePointAt(i);
            int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (bytes + n > room) {
                break;
            }
            app.appendCodePoint(cp);
            bytes += n;
            i += Character.charCount(cp);
        }
        return app + suffix;
    }
}
