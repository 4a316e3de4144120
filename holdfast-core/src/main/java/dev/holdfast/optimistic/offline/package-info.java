/**
 * The optimistic offline lock (Fowler): a {@link dev.holdfast.optimistic.offline.BusinessTransaction}
 * over several requests records the versions it read, travels sealed and signed between them ({@link
 * dev.holdfast.optimistic.offline.OptimisticOfflineLock#seal}), and commits its writes only if none of
 * the rows it read or writes changed meanwhile.
 */
@NullMarked
package dev.holdfast.optimistic.offline;

import org.jspecify.annotations.NullMarked;
