package org.wanrep.exec;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Steps one step leaves to its thread (other transactions' commits in turn, replays in turn) all run, whatever throws:
 * a throw from one of them stops the site (fail-stop) instead of silently skipping those queued after it, and a throw
 * from the step itself still reaches its caller, after them.
 */
class StepsLeftToAThreadTest {
    /** Leaves {@code step} to the running step's thread, as commitNext does. */
    private static void leave(Runnable step, List<String> fatal) {
        assertThat(WireTxnExecutor.leaveHere(WireTxnExecutor.failStopOnThrow(step, fatal::add))).isTrue();
    }

    @Test
    void aThrowingLeftStepStopsTheSiteAndTheOnesAfterItStillRun() {
        List<String> ran = new ArrayList<>(), fatal = new ArrayList<>();
        WireTxnExecutor.runHere(() -> {
            ran.add("step");
            leave(() -> ran.add("commit 1"), fatal);
            leave(() -> { throw new IllegalStateException("unexpected"); }, fatal);
            leave(() -> ran.add("commit 3"), fatal);
        });
        assertThat(ran).containsExactly("step", "commit 1", "commit 3");
        assertThat(fatal).singleElement().asString().contains("unexpected").contains("cannot follow");
    }

    @Test
    void aThrowingStepLetsWhatItLeftRunAndThenThrows() {
        List<String> ran = new ArrayList<>(), fatal = new ArrayList<>();
        assertThatThrownBy(() -> WireTxnExecutor.runHere(() -> {
            leave(() -> ran.add("commit 1"), fatal);
            throw new IllegalStateException("the step's own");
        })).hasMessage("the step's own");
        assertThat(ran).containsExactly("commit 1");
        assertThat(fatal).isEmpty();
        // the thread is clean again: outside a step nothing is left to it, a new step gets a new queue
        assertThat(WireTxnExecutor.leaveHere(() -> ran.add("never"))).isFalse();
        WireTxnExecutor.runHere(() -> leave(() -> ran.add("commit 2"), fatal));
        assertThat(ran).containsExactly("commit 1", "commit 2");
    }

    /** On a pool thread a step runs as dispatch runs it: what it left still runs, and its own throw stops the site. */
    @Test
    void aThrowingStepOnAPoolThreadStopsTheSite() {
        List<String> ran = new ArrayList<>(), fatal = new ArrayList<>();
        WireTxnExecutor.failStopOnThrow(() -> WireTxnExecutor.runHere(() -> {
            leave(() -> ran.add("commit 1"), fatal);
            throw new IllegalStateException("the step's own");
        }), fatal::add).run();
        assertThat(ran).containsExactly("commit 1");
        assertThat(fatal).singleElement().asString().contains("the step's own");
    }
}
