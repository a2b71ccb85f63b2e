package dev.waymark.cli;

import dev.waymark.subscription.EventHandler;
import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import picocli.CommandLine;

/**
 * Loads {@code dead-letters replay}'s {@code --handler} class: from the {@code --classpath} entries
 * (jars, class directories, {@code DIR/*} for every jar in a directory) in a child class loader of
 * the CLI's, or from the CLI's own classpath. {@code java -jar} ignores {@code -cp} and
 * {@code CLASSPATH}, so {@code --classpath} is the supported way to bring a handler. The CLI's
 * classes win (parent first): a handler jar that bundles Waymark uses the CLI's copy. Every refusal
 * is a usage error naming the class or entry and the remedy.
 */
final class HandlerLoader implements AutoCloseable {

    private final CommandLine command;
    private final List<String> entries;
    private final URLClassLoader loader;

    /** Checks every entry of {@code classpath} (each value may hold several, separated as the platform does). */
    HandlerLoader(CommandLine command, List<String> classpath) {
        this.command = command;
        this.entries = new ArrayList<>();
        List<URL> urls = new ArrayList<>();
        for (String value : classpath) {
            for (String entry : value.split(java.util.regex.Pattern.quote(File.pathSeparator))) {
                if (!entry.isBlank()) {
                    entries.add(entry);
                    urls.addAll(urls(entry));
                }
            }
        }
        this.loader = urls.isEmpty()
                ? null
                : new URLClassLoader("waymark-handler", urls.toArray(URL[]::new), WaymarkCli.class.getClassLoader());
    }

    private List<URL> urls(String entry) {
        boolean wildcard = entry.endsWith(File.separator + "*") || entry.endsWith("/*");
        Path path = Path.of(wildcard ? entry.substring(0, entry.length() - 1) : entry);
        if (!Files.exists(path)) {
            throw usage("--classpath entry '" + entry + "' does not exist");
        }
        if (wildcard) {
            if (!Files.isDirectory(path)) {
                throw usage("--classpath entry '" + entry + "': '" + path + "' is not a directory");
            }
            try (Stream<Path> files = Files.list(path)) {
                List<Path> jars = files.filter(p -> p.getFileName().toString().endsWith(".jar")).sorted().toList();
                List<URL> urls = new ArrayList<>();
                for (Path jar : jars) {
                    urls.add(url(entry, jar));
                }
                return urls;
            } catch (IOException e) {
                throw usage("--classpath entry '" + entry + "' cannot be listed: " + e);
            }
        }
        if (!Files.isDirectory(path)) {
            try (JarFile jar = new JarFile(path.toFile())) {
                jar.size(); // opened: a jar (or zip) indeed
            } catch (IOException e) {
                throw usage("--classpath entry '" + entry + "' is neither a directory nor a jar (" + e.getMessage()
                        + ")");
            }
        }
        return List.of(url(entry, path));
    }

    private URL url(String entry, Path path) {
        try {
            return path.toAbsolutePath().toUri().toURL();
        } catch (MalformedURLException e) {
            throw usage("--classpath entry '" + entry + "' is not a usable path: " + e.getMessage());
        }
    }

    /**
     * Creates an instance of {@code className}, an {@link EventHandler} with a public no-argument
     * constructor.
     */
    EventHandler load(String className) {
        return withContext(() -> {
            Class<?> type;
            try {
                type = Class.forName(className, true, loader != null ? loader : WaymarkCli.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw usage(loader == null
                        ? "--handler " + className + " is not on the CLI's classpath: give its jar"
                                + " or classes directory with --classpath (java -jar ignores -cp and CLASSPATH)"
                        : "--handler " + className + " is in neither --classpath (" + String.join(File.pathSeparator,
                                entries) + ") nor the CLI's classpath; check the class name and the entries");
            } catch (LinkageError e) {
                throw usage("--handler " + className + " cannot be loaded: " + e + " (add the jars it needs to"
                        + " --classpath, or run the CLI on a newer Java)");
            }
            if (!EventHandler.class.isAssignableFrom(type)) {
                throw usage("--handler " + className + " is not a " + EventHandler.class.getName());
            }
            try {
                return (EventHandler) type.getConstructor().newInstance();
            } catch (NoSuchMethodException e) {
                throw usage("--handler " + className + " has no public no-argument constructor");
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot create --handler " + className + ": "
                        + (e.getCause() != null ? e.getCause() : e), e);
            } catch (LinkageError e) {
                throw usage("--handler " + className + " cannot be created: " + e + " (add the jars it needs to"
                        + " --classpath)");
            }
        });
    }

    /**
     * Runs {@code work} with the handler's class loader as the thread's context class loader, for
     * handlers (and libraries such as Jackson or JDBC drivers) that look resources up through it.
     */
    <T> T withContext(Supplier<T> work) {
        if (loader == null) {
            return work.get();
        }
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return work.get();
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /** Whether any {@code --classpath} entry was given. */
    boolean isEmpty() {
        return entries.isEmpty();
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(command, message);
    }

    /** Closes the child class loader (its open jars). */
    @Override
    public void close() {
        if (loader != null) {
            try {
                loader.close();
            } catch (IOException e) {
                command.getErr().println("waymark: closing the --classpath jars failed: " + e);
            }
        }
    }
}
