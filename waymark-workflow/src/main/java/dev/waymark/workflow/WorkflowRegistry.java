package dev.waymark.workflow;

import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.UnknownWorkflowException;
import dev.waymark.workflow.internal.Args;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The application's map from workflow names to definitions. Only code can be re-invoked, so a
 * workflow whose name is not registered cannot run here; the resume worker counts it as
 * {@code unknownName} and leaves it untouched. One registry holds workflows of different types.
 */
public final class WorkflowRegistry {

    /**
     * One registered workflow. The body comes from {@code factory} on every run, so a factory that
     * throws fails that run (a crash attempt of that instance), not the registry or a resume pass.
     *
     * @param name the workflow name ({@link WorkflowNames#requireName})
     * @param inputType what the input is decoded as; a start (or a child's spawn) whose input it cannot
     *     read is refused, and so is a null input (one the codec reads as Java null) unless the type
     *     is {@code Void}: register a workflow that takes no input with {@code Void.class}, or take a
     *     type whose codec reads JSON null as a value (Jackson: {@code JsonNode}); a body handed a null
     *     it did not expect would crash on every attempt until the instance failed
     * @param resultType the type of the body's result
     * @param factory makes the body, once per run
     * @param <I> the input type
     * @param <R> the result type
     */
    public record Definition<I, R>(String name, Class<I> inputType, Class<R> resultType,
            Supplier<Workflow<I, R>> factory) {
        /**
         * Validates.
         *
         * @throws InvalidWorkflowInputException if the name is invalid or a component is null
         */
        public Definition {
            WorkflowNames.requireName(name);
            Args.notNull(inputType, "inputType");
            Args.notNull(resultType, "resultType");
            Args.notNull(factory, "factory");
        }
    }

    private final Map<String, Definition<?, ?>> definitions = new LinkedHashMap<>();

    /**
     * Registers {@code body} under {@code name}; returns this registry.
     *
     * @throws InvalidWorkflowInputException if the name is invalid or already registered, or an
     *     argument is null
     */
    public <I, R> WorkflowRegistry register(String name, Class<I> inputType, Class<R> resultType, Workflow<I, R> body) {
        Args.notNull(body, "body");
        return register(new Definition<>(name, inputType, resultType, () -> body));
    }

    /**
     * Registers a definition whose body is built by a factory on each run.
     *
     * @throws InvalidWorkflowInputException if its name is already registered, or it is null
     */
    public synchronized WorkflowRegistry register(Definition<?, ?> definition) {
        Args.notNull(definition, "definition");
        if (definitions.putIfAbsent(definition.name(), definition) != null) {
            throw new InvalidWorkflowInputException("workflow '" + definition.name() + "' is already registered");
        }
        return this;
    }

    /** The definition registered under {@code name}. */
    public synchronized Optional<Definition<?, ?>> find(String name) {
        return Optional.ofNullable(definitions.get(name));
    }

    /**
     * The definition registered under {@code name}.
     *
     * @throws UnknownWorkflowException if there is none
     */
    public Definition<?, ?> require(String name) {
        return find(name).orElseThrow(() -> new UnknownWorkflowException(
                "workflow '" + name + "' is not registered (registered: " + names() + ")"));
    }

    /** The registered names. */
    public synchronized Set<String> names() {
        return Collections.unmodifiableSet(new java.util.TreeSet<>(definitions.keySet()));
    }
}
