/** Workloads the client emulator runs: what a transaction is, and what the middleware must know of it. */
package org.wanrep.emulator.workload;
