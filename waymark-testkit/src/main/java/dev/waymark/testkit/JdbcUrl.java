package dev.waymark.testkit;

/**
 * A PostgreSQL JDBC URL split into the part before the database, the database and the query, so
 * the same server and options can be pointed at another database.
 *
 * @param prefix {@code jdbc:postgresql://host:port/}
 * @param database the database name
 * @param query the options, with the leading {@code ?}, or empty
 */
record JdbcUrl(String prefix, String database, String query) {

    static JdbcUrl parse(String url) {
        String scheme = "jdbc:postgresql://";
        if (!url.startsWith(scheme)) {
            throw new IllegalArgumentException("not a PostgreSQL JDBC URL (jdbc:postgresql://host:port/db): " + url);
        }
        int slash = url.indexOf('/', scheme.length());
        if (slash < 0) {
            throw new IllegalArgumentException("the JDBC URL names no database: " + url);
        }
        int question = url.indexOf('?', slash);
        String database = question < 0 ? url.substring(slash + 1) : url.substring(slash + 1, question);
        String query = question < 0 ? "" : url.substring(question);
        return new JdbcUrl(url.substring(0, slash + 1), database, query);
    }

    JdbcUrl withDatabase(String name) {
        return new JdbcUrl(prefix, name, query);
    }

    @Override
    public String toString() {
        return prefix + database + query;
    }
}
