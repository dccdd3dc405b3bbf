package org.wanrep.writeset;

import java.util.List;
import java.util.Objects;

/**
 * The rows one committed update transaction wrote, in the order it wrote them, tagged with the
 * middleware's transaction id. Applying it elsewhere reproduces the transaction's effect without
 * re-executing its statements.
 */
public record WriteSet(String tag, List<RowChange> rows) {
    public WriteSet {
        Objects.requireNonNull(tag, "tag");
        rows = List.copyOf(rows);
    }

    public long approximateBytes() {
        long n = 16 + tag.length();
        for (RowChange r : rows) n += r.approximateBytes();
        return n;
    }
}
