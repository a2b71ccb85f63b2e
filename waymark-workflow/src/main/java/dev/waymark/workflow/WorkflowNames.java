package dev.waymark.workflow;

import dev.waymark.store.StreamNames;
import dev.waymark.store.plumbing.Utf16;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.internal.Text;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Validation rules for workflow names, ids and step names, shared by every entry point. A message
 * that refuses a value shows it with every control, format or separator character escaped
 * (backslash, 'u', four hex digits), so that it prints on one line and as typed.
 */
public final class WorkflowNames {

    /** Longest workflow name. */
    public static final int MAX_NAME = 100;
    /**
     * Longest workflow id, in characters (UTF-16 code units). A new instance's id must also leave
     * room for its journal's stream name (see {@link #requireJournalFits}).
     */
    public static final int MAX_ID = 200;
    /** Longest step, sleep, awakeable or patch name. */
    public static final int MAX_STEP_NAME = 200;
    /** Step-name prefixes Waymark uses for its own journal entries. */
    public static final List<String> RESERVED_STEP_PREFIXES = List.of("sleep:", "sleepat:", "awk:", "awkid:", "child:",
            "patch:", "__");
    /**
     * A suffix no child step name may end with: the result of child {@code s} is journaled under
     * {@code child:s:result}, so a child named {@code s:result} would share that entry.
     */
    public static final String CHILD_RESULT_SUFFIX = ":result";

    private WorkflowNames() {}

    /** Returns {@code name} if it is a valid workflow name: letters, digits, '_' and '.', at most {@value #MAX_NAME}. */
    public static String requireName(String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidWorkflowInputException("workflow name must not be empty");
        }
        if (name.length() > MAX_NAME) {
            throw new InvalidWorkflowInputException(
                    "workflow name is " + name.length() + " characters, the limit is " + MAX_NAME);
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(Character.isLetterOrDigit(c) && c < 128) && c != '_' && c != '.') {
                throw new InvalidWorkflowInputException("workflow name '" + Text.escape(name) + "' contains '"
                        + Text.escape(String.valueOf(c)) + "': use letters, digits, '_' and '.'");
            }
        }
        return name;
    }

    /**
     * Returns {@code id} if it may name an instance: not blank, no '#', no control characters, no lone
     * UTF-16 surrogate (it has no UTF-8 form: the database would store '?', and two ids could meet), at
     * most {@value #MAX_ID} characters. This reaches an existing instance (a handle, cancel, retry,
     * describe); a new one must pass {@link #requireNewId} too.
     */
    public static String requireId(String id) {
        if (id == null || id.isBlank()) {
            throw new InvalidWorkflowInputException("workflow id must not be empty");
        }
        if (id.length() > MAX_ID) {
            throw new InvalidWorkflowInputException(
                    "workflow id is " + id.length() + " characters, the limit is " + MAX_ID);
        }
        for (int i = 0; i < id.length(); i++) {
            char c = id.charAt(i);
            if (c == '#' || Character.isISOControl(c)) {
                throw new InvalidWorkflowInputException("workflow id '" + Text.escape(id)
                        + "' contains a reserved character (" + (c == '#' ? "'#'" : "a control character") + ")");
            }
        }
        requireNoLoneSurrogate("workflow id", id, InvalidWorkflowInputException::new);
        return id;
    }

    /**
     * Returns {@code id} if a new instance may take it: a valid id ({@link #requireId}) with no
     * invisible or control character: no control character (C0 or C1, U+0085 included), no format
     * character (the bidi controls U+200E, U+200F, U+202A to U+202E and U+2066 to U+2069, the
     * zero-width characters U+200B to U+200D, U+FEFF, ...) and no line or paragraph separator
     * (U+2028, U+2029). Each would garble a listing or a log line that prints the id (a line break,
     * text shown reversed). {@code start} and a child's spawn check this; an instance started
     * before this rule is still reached by its id ({@link #requireId}).
     *
     * @throws InvalidWorkflowInputException naming the character, escaped
     */
    public static String requireNewId(String id) {
        requireId(id);
        requireVisible("workflow id", id);
        return id;
    }

    /**
     * Checks that every journal stream of a new instance {@code name}/{@code id} fits the event
     * store: the stream of generation g is {@code $wf-<name>-<id>#<g>}, and a stream name is at most
     * {@value StreamNames#MAX_BYTES} bytes of UTF-8, so the name with the longest generation suffix
     * ({@code #2147483647}) must fit. With the longest workflow name that leaves 396 bytes for the
     * id; an id of 200 characters outside ASCII can be larger. {@code start} and {@code child} call
     * this; an existing instance is reached by its id whatever this says.
     *
     * @throws InvalidWorkflowInputException naming the id's size in bytes and the limit
     */
    public static void requireJournalFits(String name, String id) {
        String longest = "$wf-" + name + "-" + id + "#" + Integer.MAX_VALUE;
        int bytes = longest.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > StreamNames.MAX_BYTES) {
            int idBytes = id.getBytes(StandardCharsets.UTF_8).length;
            throw new InvalidWorkflowInputException("workflow id of " + name + " is " + idBytes
                    + " bytes of UTF-8, more than the " + (idBytes - (bytes - StreamNames.MAX_BYTES))
                    + " that its journal leaves for it: the stream name '$wf-" + name + "-<id>#<generation>' is up to "
                    + bytes + " bytes, the event store's limit is " + StreamNames.MAX_BYTES
                    + " (StreamNames.MAX_BYTES); id '" + Text.escape(Text.shorten(id, 40)) + "'");
        }
    }

    /**
     * Returns {@code name} if it is a valid user step name (also sleep, awakeable and patch names):
     * 1 to {@value #MAX_STEP_NAME} characters, no reserved prefix ({@link #RESERVED_STEP_PREFIXES}),
     * no NUL, no lone UTF-16 surrogate.
     *
     * @throws InvalidWorkflowInputException naming what is wrong with it
     */
    public static String requireStepName(String name) {
        requireAnyStepName(name);
        for (String prefix : RESERVED_STEP_PREFIXES) {
            if (name.startsWith(prefix)) {
                throw new InvalidWorkflowInputException(
                        "step name '" + Text.escape(name) + "' uses the reserved prefix '" + prefix + "'");
            }
        }
        return name;
    }

    /**
     * Returns {@code name} if a step not yet journaled may take it (also a sleep, awakeable, child
     * step or patch name): a valid user step name ({@link #requireStepName}) with no invisible or
     * control character (as {@link #requireNewId} says). The context checks this before it journals
     * a name for the first time; a name journaled before this rule replays as it is.
     *
     * @throws InvalidWorkflowInputException naming the character, escaped
     */
    public static String requireNewStepName(String name) {
        requireStepName(name);
        requireVisible("step name", name);
        return name;
    }

    /**
     * Returns {@code name} if it is a valid child step name: a valid user step name that does not end
     * with {@value #CHILD_RESULT_SUFFIX}.
     *
     * @throws InvalidWorkflowInputException if it ends with {@value #CHILD_RESULT_SUFFIX}, or is not a
     *     valid user step name ({@link #requireStepName})
     */
    public static String requireChildStepName(String name) {
        requireStepName(name);
        if (name.endsWith(CHILD_RESULT_SUFFIX)) {
            throw new InvalidWorkflowInputException("child step name '" + Text.escape(name) + "' ends with '"
                    + CHILD_RESULT_SUFFIX + "', which is reserved: the result of child '"
                    + Text.escape(name.substring(0, name.length() - CHILD_RESULT_SUFFIX.length()))
                    + "' is journaled as 'child:" + Text.escape(name) + "'");
        }
        return name;
    }

    static String requireAnyStepName(String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidWorkflowInputException("step name must not be empty");
        }
        if (name.length() > MAX_STEP_NAME) {
            throw new InvalidWorkflowInputException(
                    "step name is " + name.length() + " characters, the limit is " + MAX_STEP_NAME);
        }
        // journaled inside a jsonb document, which cannot hold a NUL and stores a lone surrogate as '?':
        // replay, which finds entries by step name, would then miss the entry and run the step again
        if (name.indexOf('\u0000') >= 0) {
            throw new InvalidWorkflowInputException("step name '" + Text.escape(name) + "' contains a NUL character");
        }
        requireNoLoneSurrogate("step name", name, InvalidWorkflowInputException::new);
        return name;
    }

    private static void requireVisible(String what, String s) {
        int at = Text.firstGarbling(s);
        if (at >= 0) {
            String c = Text.escape(new String(Character.toChars(s.codePointAt(at))));
            throw new InvalidWorkflowInputException(what + " '" + Text.escape(s) + "' contains an invisible or control"
                    + " character (" + c + "), which would garble listings and logs: use visible characters");
        }
    }

    private static void requireNoLoneSurrogate(String what, String s,
            java.util.function.Function<String, RuntimeException> error) {
        int at = Utf16.loneSurrogate(s);
        if (at >= 0) {
            char c = s.charAt(at);
            throw error.apply(what + " '" + Text.escape(s.replace(c, '?')) + "' contains a lone UTF-16"
                    + " surrogate (\\u" + Integer.toHexString(c) + "), which has no UTF-8 form");
        }
    }
}
