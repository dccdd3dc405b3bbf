package org.wanrep.gcs.jgroups;

import org.jgroups.Message;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One emulated WAN link, in one direction and for one kind of traffic (a sender's regular or OOB messages):
 * messages wait here until their due time, in arrival order, and are then passed on by the lane's own
 * thread. Due times never decrease along the lane (a message is due no earlier than the one before it), so
 * the link stays FIFO whatever the jitter, and the lane's thread waits for the head only: a message added
 * behind a waiting head does not wake it. Whatever is due when the thread wakes leaves in one go, as runs of
 * consecutive messages of the same kind (multicast or unicast), in order; nothing leaves before its due
 * time. The thread is a platform thread: a timed wait of a virtual thread goes through the carrier pool's
 * delay scheduler, two more thread hand-offs per wake-up. A lane idle for {@link #IDLE_EXIT_NANOS} ends
 * its thread (its sender may be gone for good); {@link #add} then answers false and the caller makes a new one.
 * A message that is due when it arrives may be passed up by the receiving thread itself ({@link #passIfIdle}) while
 * the lane holds and passes nothing: one thread hand-off and one timed wake-up fewer, the link's order kept.
 */
final class DelayLane {
    /** Takes a run of due messages of the same kind, in lane order, on the lane's thread. */
    interface Sink { void deliver(List<Message> run, boolean multicast); }

    static final long IDLE_EXIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private record Held(Message msg, long due, boolean multicast) {}

    private final Sink sink;
    private final long idleExitNanos;
    private final Runnable onRetire;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition work = lock.newCondition();
    private final ArrayDeque<Held> queue = new ArrayDeque<>();   // guarded by lock, due times non-decreasing
    private long lastDue;            // guarded by lock
    private boolean any;             // guarded by lock: lastDue is set
    private boolean idle;            // guarded by lock: the thread waits for work, not for a due time
    private boolean closed;          // guarded by lock: retired or stopped, takes nothing more
    private boolean passing;         // guarded by lock: messages of the lane are on their way up (its thread's, or a direct pass)
    private final Thread thread;

    /**
     * Starts the lane's thread. {@code onRetire} runs under the lane's lock when the lane ends for being idle
     * (the owner forgets it there, so no message can be added to a lane that is gone).
     */
    DelayLane(String name, Sink sink, Runnable onRetire) {
        this(name, sink, onRetire, IDLE_EXIT_NANOS);
    }

    DelayLane(String name, Sink sink, Runnable onRetire, long idleExitNanos) {
        this.idleExitNanos = idleExitNanos;
        this.sink = sink;
        this.onRetire = onRetire;
        this.thread = Thread.ofPlatform().daemon().name(name).unstarted(this::run);
        thread.start();
    }

    /** Queues one message, due at {@code due} ({@link System#nanoTime}) or after the one before it; false if the lane is gone. */
    boolean add(Message msg, long due, boolean multicast) {
        lock.lock();
        try {
            if (closed) return false;
            enqueue(msg, due, multicast);
            wake();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** Queues {@code n} messages (a batch that arrived together), each due at its {@code dues[i]} or after the one before; false if the lane is gone. */
    boolean add(Message[] msgs, long[] dues, int n, boolean multicast) {
        lock.lock();
        try {
            if (closed) return false;
            for (int i = 0; i < n; i++) enqueue(msgs[i], dues[i], multicast);
            wake();
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void enqueue(Message msg, long due, boolean multicast) {
        if (any && due - lastDue < 0) due = lastDue;
        lastDue = due;
        any = true;
        queue.addLast(new Held(msg, due, multicast));
    }

    /**
     * Runs {@code pass} (which passes a message that is due already up the stack) on the caller's thread, if the lane
     * holds nothing and passes nothing up at this moment: then nothing of the link is ahead of it. False if it does
     * (the caller queues the message instead, behind what is there). Meanwhile the lane's thread passes nothing.
     */
    boolean passIfIdle(Runnable pass) {
        lock.lock();
        try {
            if (closed || passing || !queue.isEmpty()) return false;
            passing = true;
        } finally {
            lock.unlock();
        }
        try {
            pass.run();
        } finally {
            lock.lock();
            try {
                passing = false;
                if (!queue.isEmpty()) {   // queued behind it meanwhile: the thread waits for this pass to end
                    idle = false;
                    work.signal();
                }
            } finally {
                lock.unlock();
            }
        }
        return true;
    }

    /** Only a thread waiting for work needs the signal: one waiting for the head's due time finds the newcomers behind it. */
    private void wake() {
        if (idle) {
            idle = false;
            work.signal();
        }
    }

    /** Ends the lane: what it still holds is dropped (the channel is going away). */
    void stop() {
        lock.lock();
        try {
            closed = true;
            queue.clear();
            work.signal();
        } finally {
            lock.unlock();
        }
    }

    int size() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    Thread thread() { return thread; }

    private void run() {
        List<Held> ready = new ArrayList<>();
        List<Message> run = new ArrayList<>();
        while (true) {
            lock.lock();
            try {
                while (true) {
                    if (closed) return;
                    Held head = queue.peekFirst();
                    if (head == null || passing) {   // nothing held, or a direct pass is running: it signals when it ends
                        idle = true;
                        long left = work.awaitNanos(idleExitNanos);
                        if (left <= 0 && queue.isEmpty() && !passing && !closed) {
                            closed = true;
                            onRetire.run();
                            return;
                        }
                        continue;
                    }
                    long wait = head.due - System.nanoTime();
                    if (wait <= 0) break;
                    work.awaitNanos(wait);
                }
                long now = System.nanoTime();
                Held h;
                while ((h = queue.peekFirst()) != null && h.due - now <= 0) ready.add(queue.pollFirst());
                passing = true;
            } catch (InterruptedException e) {
                return;
            } finally {
                idle = false;
                lock.unlock();
            }
            // in order, as runs of one kind (a JGroups batch is all multicast or all unicast)
            for (int i = 0; i < ready.size(); ) {
                boolean mcast = ready.get(i).multicast;
                while (i < ready.size() && ready.get(i).multicast == mcast) run.add(ready.get(i++).msg);
                try {
                    sink.deliver(run, mcast);
                } catch (Throwable t) {
                    // the sink logs; the lane goes on
                }
                run.clear();
            }
            ready.clear();
            lock.lock();
            try {
                passing = false;
            } finally {
                lock.unlock();
            }
        }
    }
}
