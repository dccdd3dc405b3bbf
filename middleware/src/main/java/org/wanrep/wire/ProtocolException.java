package org.wanrep.wire;

/** The peer broke the protocol (bad length, unexpected message): the connection cannot go on. */
public class ProtocolException extends RuntimeException {
    public ProtocolException(String message) { super(message); }
}
