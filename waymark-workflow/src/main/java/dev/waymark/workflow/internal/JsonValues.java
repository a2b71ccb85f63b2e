package dev.waymark.workflow.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.Comparator;

/** Comparing JSON documents as values, the way {@code jsonb} stores them. */
public final class JsonValues {

    /**
     * Equal nodes, or two numbers of equal value: {@code jsonb} stores {@code 1.0E7} as
     * {@code 10000000} and {@code 2.50} as {@code 2.50}, so a number read back may be another kind
     * of node than the one just encoded.
     */
    private static final Comparator<JsonNode> BY_VALUE = (a, b) -> a.equals(b)
            || (a.isNumber() && b.isNumber() && a.decimalValue().compareTo(b.decimalValue()) == 0) ? 0 : 1;

    private JsonValues() {}

    /** Whether two JSON texts hold the same value (object keys in any order, numbers by value). */
    public static boolean same(String a, String b) {
        try {
            return WorkflowJson.MAPPER.readTree(a).equals(BY_VALUE, WorkflowJson.MAPPER.readTree(b));
        } catch (IOException e) {
            return false;
        }
    }
}
