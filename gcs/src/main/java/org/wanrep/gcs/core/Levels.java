package org.wanrep.gcs.core;

/**
 * Ranks the authorities that assign slots, so that a flush can resolve a conflict between what a
 * crashed sequencer said and what a later flush decided: the later one always ranks higher.
 * The flush plan that creates epoch k ranks 2k; the sequencer of epoch k ranks 2k+1.
 */
final class Levels {
    private Levels() {}
    static long plan(long epoch) { return 2 * epoch; }
    static long sequencer(long epoch) { return 2 * epoch + 1; }
}
