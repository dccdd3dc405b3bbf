package org.wanrep.gcs;

/** Thrown by a multicast at a member outside the primary component: nothing would order it. */
public class NotPrimaryException extends RuntimeException {
    public NotPrimaryException(String message) { super(message); }
}
