/**
 * Plumbing shared between Waymark's own modules: JDBC transaction helpers with Waymark's server-side
 * bounds ({@link dev.waymark.store.plumbing.Jdbc}, {@link dev.waymark.store.plumbing.TransactionBounds}),
 * SQLSTATE classification ({@link dev.waymark.store.plumbing.SqlErrors}), schema-name quoting
 * ({@link dev.waymark.store.plumbing.Schema}), text checks ({@link dev.waymark.store.plumbing.Utf16})
 * and time-ordered ids ({@link dev.waymark.store.plumbing.UuidV7}).
 *
 * <p><b>This package is not API.</b> It is exported (by {@code module-info.java}) only to Waymark's
 * modules (subscription, workflow, messaging, kafka, testkit); it may change in any release without
 * notice. Applications use the types of {@code dev.waymark.store} instead. Everything else in
 * waymark-store's implementation stays in {@code dev.waymark.store.internal}, which no other module
 * may import (the build fails if one does: JPMS for main code, {@code ModuleBoundariesTest} for
 * tests and class-path modules).
 */
package dev.waymark.store.plumbing;
