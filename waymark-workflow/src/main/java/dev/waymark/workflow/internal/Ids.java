package dev.waymark.workflow.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.UUID;

/**
 * Deterministic identities of journal entries and the names of journal streams. These are frozen:
 * two writers of one entry (a run and a stale run of it, or two releases of Waymark) must derive the
 * same id for the first writer to win, and a stream renamed would hide its journal from replay.
 */
public final class Ids {

    /** RFC 4122 namespace for URLs, the namespace of every Waymark name-based id. */
    public static final UUID NAMESPACE_URL = UUID.fromString("6ba7b811-9dad-11d1-80b4-00c04fd430c8");

    private Ids() {}

    /** The RFC 4122 version 5 (SHA-1) UUID of {@code name} (UTF-8) in {@code namespace}. */
    public static UUID uuid5(UUID namespace, String name) {
        MessageDigest sha1;
        try {
            sha1 = MessageDigest.getInstance("SHA-1");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every Java platform", e);
        }
        ByteBuffer ns = ByteBuffer.allocate(16);
        ns.putLong(namespace.getMostSignificantBits()).putLong(namespace.getLeastSignificantBits());
        sha1.update(ns.array());
        byte[] hash = sha1.digest(name.getBytes(StandardCharsets.UTF_8));
        hash[6] = (byte) ((hash[6] & 0x0f) | 0x50);
        hash[8] = (byte) ((hash[8] & 0x3f) | 0x80);
        ByteBuffer b = ByteBuffer.wrap(hash, 0, 16);
        return new UUID(b.getLong(), b.getLong());
    }

    /**
     * The id of the journal entry {@code key} (a step name or marker) of one generation; distinct
     * for distinct (name, id, generation, key). A workflow name has no ':', so for an id without one
     * the four parts split back apart from {@code name:id:generation:key}: that form is the frozen
     * one. An id with a ':' would make two entries' forms equal (id {@code x:1} at generation 0,
     * step {@code s}, against id {@code x} at generation 1, step {@code 0:s}), and the second
     * writer would be handed the first one's result; such an id is length-prefixed under another
     * prefix instead. (Earlier builds took the first form for every id; replay finds entries by
     * step name, so an instance they journaled keeps replaying.)
     */
    public static UUID entryId(String name, String id, int generation, String key) {
        if (id.indexOf(':') < 0) {
            return uuid5(NAMESPACE_URL, "waymark:workflow:" + name + ":" + id + ":" + generation + ":" + key);
        }
        return uuid5(NAMESPACE_URL, "waymark:workflow2:" + name + ":" + id.length() + ":" + id + ":" + generation
                + ":" + key);
    }

    /** The journal stream of one generation. Same rule as the SQL function {@code wf_stream}. */
    public static String stream(String name, String id, int generation) {
        return "$wf-" + name + "-" + id + (generation > 0 ? "#" + generation : "");
    }
}
