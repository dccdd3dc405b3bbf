package org.wanrep.emulator;

import org.wanrep.emulator.workload.Transaction;

/** A transaction handed to the connection pool: its index, itself, and who waits for it (closed loop), if anyone. */
record Submission(int index, Transaction txn, Runnable onDone) {}
