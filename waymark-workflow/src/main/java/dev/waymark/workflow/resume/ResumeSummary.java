package dev.waymark.workflow.resume;

/**
 * What one resume pass did.
 *
 * @param discovered due instances of registered names the pass claimed (at most the batch limit; an
 *     instance under a live lease is never claimed, so never counted)
 * @param resumed re-invocations performed (including crashed and transient ones; not lease skips)
 * @param completed re-invocations that completed the workflow
 * @param stillSuspended re-invocations that parked again (or moved to a new generation and parked)
 * @param unknownName runnable instances whose name is not registered here (up to the batch limit): reported,
 *     never claimed or failed, and never taking a place in the batch
 * @param failed workflows this pass marked failed (their crash budget spent; each also counted in
 *     {@code crashed}); a re-invocation that finds the workflow already failed is counted only in
 *     {@code resumed}, so that summed over every worker this counts each failure once
 * @param cancelled re-invocations that found the workflow cancelled (cancelled before or during the
 *     run, by anyone); also counted in {@code resumed}
 * @param crashed re-invocations whose body threw (an attempt recorded, retried after backoff)
 * @param transientErrors store errors while advancing (no attempt consumed)
 * @param leaseSkipped attempts whose lease was lost mid-run (instances under a live lease are not claimed)
 */
public record ResumeSummary(int discovered, int resumed, int completed, int stillSuspended, int unknownName,
        int failed, int cancelled, int crashed, int transientErrors, int leaseSkipped) {

    /** The empty summary. */
    public static final ResumeSummary EMPTY = new ResumeSummary(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** Field-wise sum. */
    public ResumeSummary plus(ResumeSummary o) {
        return new ResumeSummary(discovered + o.discovered, resumed + o.resumed, completed + o.completed,
                stillSuspended + o.stillSuspended, unknownName + o.unknownName, failed + o.failed,
                cancelled + o.cancelled, crashed + o.crashed, transientErrors + o.transientErrors,
                leaseSkipped + o.leaseSkipped);
    }
}
