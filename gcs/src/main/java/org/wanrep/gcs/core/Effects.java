package org.wanrep.gcs.core;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;

/** What the core asks of its environment: sending, and delivering to the application. */
public interface Effects {
    /** Send to one member, or with {@code to == null} to every other member of the current membership view. */
    void send(String to, Proto msg);

    void optimistic(GcsMessage m);

    /** Final delivery; {@code slot} is the internal ordering position (for tests and diagnostics). */
    void ordered(GcsMessage m, long gsn, long slot);

    void reliable(GcsMessage m);

    void view(GcsView v);

    void undeliverable(MsgId id, Delivery delivery, String reason);

    /**
     * The configured sites are now {@code sites}, as set by the change delivered at {@code gsn}: called
     * right before that change's {@link #ordered} delivery, or, for a member that took over the history
     * in a flush (a joiner), before its view.
     */
    default void sitesChanged(java.util.List<String> sites, long gsn) {}
}
