package org.wanrep.txn;

/** One PostgreSQL frontend message as it travels in a request: type byte and payload (no length). */
public record WireMessage(byte type, byte[] payload) {}
