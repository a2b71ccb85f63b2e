package dev.waymark.workflow.internal;

import dev.waymark.store.EventStore;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.util.function.BiConsumer;
import java.util.function.BiPredicate;

/**
 * How {@code WorkflowEngine} creates a {@link ResumeWorker} without the worker having a public
 * constructor that takes internal types: the worker's class hands its (private) constructor to
 * {@link #register} when it is initialized, once, and {@link #create} calls it. Java has no
 * friend access across packages; this is the JDK's own "shared secrets" pattern.
 */
public final class ResumeWorkers {

    /** What a worker shares with the engine that creates it. */
    public record Parts(EngineRuntime runtime, WorkflowRegistry registry, EventStore store,
            BiConsumer<Instances.Key, Advancer.Advance> advanced, BiPredicate<String, String> cancel,
            BacklogSampler backlog, java.util.concurrent.atomic.AtomicLong inFlight) {}

    /** The worker's constructor. */
    @FunctionalInterface
    public interface Factory {
        /** A new, unstarted worker. */
        ResumeWorker create(Parts parts, ResumeOptions options);
    }

    private static volatile Factory factory;

    private ResumeWorkers() {}

    /**
     * Called once, by {@link ResumeWorker}'s class initializer.
     *
     * @throws IllegalStateException if the caller is not {@link ResumeWorker}, or a factory is already
     *     registered
     */
    public static synchronized void register(Factory f) {
        if (StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).getCallerClass() != ResumeWorker.class) {
            throw new IllegalStateException("only ResumeWorker registers its factory");
        }
        if (factory != null) {
            throw new IllegalStateException("a resume worker factory is already registered");
        }
        factory = f;
    }

    /** A new worker over {@code parts}. */
    public static ResumeWorker create(Parts parts, ResumeOptions options) {
        Factory f = factory;
        if (f == null) {
            initialize(ResumeWorker.class); // its initializer registers the factory
            f = factory;
        }
        return f.create(parts, options);
    }

    private static void initialize(Class<?> type) {
        try {
            Class.forName(type.getName(), true, type.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("cannot load " + type.getName(), e);
        }
    }
}
