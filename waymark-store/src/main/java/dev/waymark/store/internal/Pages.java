package dev.waymark.store.internal;

import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Turns a page function into a lazy stream: each page is fetched when the previous one is used
 * up, so memory stays at one page, and no connection is held between pages.
 */
final class Pages {

    private Pages() {}

    /**
     * @param first the cursor before the first element
     * @param page fetches the page after a cursor
     * @param cursorOf the cursor of an element
     * @param pageSize the page size; a shorter page ends the stream
     */
    static <T, C> Stream<T> lazily(C first, Function<C, List<T>> page, Function<T, C> cursorOf, int pageSize) {
        Iterator<T> iterator = new Iterator<>() {
            private C cursor = first;
            private List<T> current = List.of();
            private int index;
            private boolean exhausted;

            @Override
            public boolean hasNext() {
                if (index < current.size()) {
                    return true;
                }
                if (exhausted) {
                    return false;
                }
                current = page.apply(cursor);
                index = 0;
                exhausted = current.size() < pageSize;
                if (!current.isEmpty()) {
                    cursor = cursorOf.apply(current.get(current.size() - 1));
                }
                return !current.isEmpty();
            }

            @Override
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return current.get(index++);
            }
        };
        return StreamSupport.stream(
                Spliterators.spliteratorUnknownSize(iterator, Spliterator.ORDERED | Spliterator.NONNULL), false);
    }
}
