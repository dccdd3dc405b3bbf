package org.wanrep.gcs;

/** A delivered multicast. {@code payload} is shared, never modify it. */
public record GcsMessage(MsgId id, Delivery delivery, byte[] payload) {
    public String sender() { return id.sender(); }
    public String senderSite() { return Members.siteOf(id.sender()); }
}
