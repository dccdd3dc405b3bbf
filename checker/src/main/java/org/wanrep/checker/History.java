package org.wanrep.checker;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A history: events in the order they happened. Saved as JSON lines (history.jsonl), one event a line, e.g.
 * <pre>{"process":3,"txn":17,"type":"invoke","time":1234,"node":"site1","ops":[["append",4,17],["r",2,null]]}
 * {"process":3,"txn":17,"type":"ok","time":2345,"node":"site1","ops":[["append",4,17],["r",2,[5,9]]]}</pre>
 * Thread-safe for concurrent {@link #add}: clients of a live run record into one history.
 */
public final class History {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final List<Event> events = new ArrayList<>();

    public History() { }

    public History(List<Event> events) { this.events.addAll(events); }

    public synchronized void add(Event e) { events.add(e); }

    public synchronized List<Event> events() { return List.copyOf(events); }

    public synchronized int size() { return events.size(); }

    /** Pairs invocations with completions (by transaction id); an invocation that never completed is info. */
    public List<Txn> transactions() {
        List<Event> evs = events();
        Map<Long, Integer> open = new HashMap<>();
        List<Txn> out = new ArrayList<>();
        List<Event> invokes = new ArrayList<>();
        List<Long> invokeSeqs = new ArrayList<>();
        for (int i = 0; i < evs.size(); i++) {
            Event e = evs.get(i);
            if (e.type() == OpType.INVOKE) {
                if (open.put(e.txn(), invokes.size()) != null)
                    throw new IllegalArgumentException("transaction " + e.txn() + " invoked twice");
                invokes.add(e);
                invokeSeqs.add((long) i);
                out.add(null);
            } else {
                Integer at = open.remove(e.txn());
                if (at == null) throw new IllegalArgumentException("transaction " + e.txn() + " completed without an invocation (event " + i + ")");
                Event inv = invokes.get(at);
                List<MicroOp> ops = e.type() == OpType.OK ? e.ops() : inv.ops();
                if (e.type() != OpType.OK) ops = ops.stream().map(o -> o.isRead() ? MicroOp.read(o.key()) : o).toList();
                out.set(at, new Txn(e.txn(), inv.process(), inv.node() != null ? inv.node() : e.node(), e.type(), ops,
                        inv.time(), e.time(), invokeSeqs.get(at), i, e.error()));
            }
        }
        for (int at : open.values()) {
            Event inv = invokes.get(at);
            out.set(at, new Txn(inv.txn(), inv.process(), inv.node(), OpType.INFO,
                    inv.ops().stream().map(o -> o.isRead() ? MicroOp.read(o.key()) : o).toList(),
                    inv.time(), Long.MAX_VALUE, invokeSeqs.get(at), Long.MAX_VALUE, "never completed"));
        }
        return out;
    }

    public void save(Path file) {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            write(w);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void write(Writer w) throws IOException {
        JsonFactory f = JSON.getFactory();
        for (Event e : events()) {
            JsonGenerator g = f.createGenerator(w);
            g.configure(JsonGenerator.Feature.AUTO_CLOSE_TARGET, false);
            g.writeStartObject();
            g.writeNumberField("process", e.process());
            g.writeNumberField("txn", e.txn());
            g.writeStringField("type", e.type().json());
            g.writeNumberField("time", e.time());
            if (e.node() != null) g.writeStringField("node", e.node());
            if (e.error() != null) g.writeStringField("error", e.error());
            g.writeArrayFieldStart("ops");
            for (MicroOp o : e.ops()) {
                g.writeStartArray();
                g.writeString(o.isAppend() ? "append" : "r");
                g.writeNumber(o.key());
                if (o.isAppend()) g.writeNumber(o.value());
                else if (o.read() == null) g.writeNull();
                else g.writeArray(o.read(), 0, o.read().length);
                g.writeEndArray();
            }
            g.writeEndArray();
            g.writeEndObject();
            g.close();
            w.write('\n');
        }
        w.flush();
    }

    public static History load(Path file) {
        History h = new History();
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) continue;
                try {
                    h.events.add(parse(JSON.readTree(line)));
                } catch (RuntimeException | IOException e) {
                    throw new IllegalArgumentException(file + ":" + n + ": " + e.getMessage(), e);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return h;
    }

    private static Event parse(JsonNode n) {
        List<MicroOp> ops = new ArrayList<>();
        for (JsonNode o : n.path("ops")) {
            String f = o.get(0).asText();
            long k = o.get(1).asLong();
            JsonNode v = o.get(2);
            if (f.equals("append")) ops.add(MicroOp.append(k, v.asLong()));
            else if (f.equals("r")) {
                if (v == null || v.isNull()) ops.add(MicroOp.read(k));
                else {
                    long[] l = new long[v.size()];
                    for (int i = 0; i < l.length; i++) l[i] = v.get(i).asLong();
                    ops.add(MicroOp.read(k, l));
                }
            } else throw new IllegalArgumentException("unknown micro-op " + f);
        }
        return new Event(n.path("process").asInt(), n.path("txn").asLong(), OpType.parse(n.path("type").asText()),
                n.path("time").asLong(), ops, n.hasNonNull("node") ? n.get("node").asText() : null,
                n.hasNonNull("error") ? n.get("error").asText() : null);
    }
}
