package dev.waymark.store.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The broadcast listeners of one store handle, by topic. Thread-safe. */
final class BroadcastListeners {

    private static final Logger log = LoggerFactory.getLogger(BroadcastListeners.class);

    private final Map<String, List<Consumer<String>>> topics = new ConcurrentHashMap<>();

    /**
     * Adds {@code listener} to {@code topic}; the returned action removes this registration, and
     * only it, however often it runs (the same listener object may be registered more than once).
     */
    Runnable add(String topic, Consumer<String> listener) {
        // a new object per registration, equal only to itself: removing it cannot remove another
        // registration of the same listener object (before: removed by equality, both went)
        Registered registered = new Registered(listener);
        // the add under the map's lock: removing the last listener at the same moment cannot drop the
        // list this one goes into
        topics.compute(topic, (t, list) -> {
            List<Consumer<String>> l = list == null ? new CopyOnWriteArrayList<>() : list;
            l.add(registered);
            return l;
        });
        return () -> topics.computeIfPresent(topic, (t, list) -> {
            list.remove(registered);
            return list.isEmpty() ? null : list;
        });
    }

    /**
     * Calls every listener of {@code topic} with {@code message}. What a listener throws is logged,
     * except a virtual-machine error such as out of memory, which escapes (a stack overflow does not).
     */
    void deliver(String topic, String message) {
        List<Consumer<String>> listeners = topics.get(topic);
        if (listeners == null) {
            return;
        }
        for (Consumer<String> l : listeners) {
            try {
                l.accept(message);
            } catch (RuntimeException | Error e) {
                if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                    throw (Error) e; // out of memory and the like: the LISTEN loop reconnects
                }
                log.warn("waymark: a listener of broadcast topic {} threw; ignored", topic, e);
            }
        }
    }

    /** One registration of a broadcast listener; equal only to itself. */
    private static final class Registered implements Consumer<String> {
        private final Consumer<String> listener;

        Registered(Consumer<String> listener) {
            this.listener = listener;
        }

        @Override
        public void accept(String message) {
            listener.accept(message);
        }
    }
}
