package dev.waymark.workflow.internal;

import dev.waymark.store.EventStore;
import dev.waymark.workflow.WorkflowRegistry;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.BiPredicate;

/**
 * What a resume worker shares with the engine that creates it.
 *
 * @param runtime the engine's runtime
 * @param registry the workflows it runs
 * @param store the store
 * @param advanced hears how each attempt ended (the engine completes in-process waits with it)
 * @param cancel cancels a workflow by name and id, answering whether it was cancelled now
 * @param backlog the engine's backlog sampler
 * @param inFlight attempts running in the process (the engine's runs and its workers' attempts)
 */
public record ResumeParts(EngineRuntime runtime, WorkflowRegistry registry, EventStore store,
        BiConsumer<Instances.Key, Advancer.Advance> advanced, BiPredicate<String, String> cancel,
        BacklogSampler backlog, AtomicLong inFlight) {}
