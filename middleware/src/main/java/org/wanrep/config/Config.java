package org.wanrep.config;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Configuration: a YAML or properties file flattened to dotted keys, then {@code --set key=value}
 * overrides. Sealed once built: unknown keys and bad values fail fast with a message naming the key.
 * {@link #forSite} resolves {@code site.NAME.KEY} before {@code KEY}.
 */
public final class Config {
    private final Map<String, String> values;

    private Config(Map<String, String> values) { this.values = Collections.unmodifiableMap(values); }

    public static Config defaults() { return build(Map.of(), List.of()); }

    /** Loads {@code file} (may be null) and applies {@code overrides} ({@code key=value} each). */
    public static Config load(Path file, List<String> overrides) throws IOException {
        Map<String, String> v = new LinkedHashMap<>();
        if (file != null) {
            if (!Files.isRegularFile(file)) throw new ConfigException("configuration file " + file + " does not exist");
            String name = file.getFileName().toString();
            if (name.endsWith(".properties")) {
                Properties p = new Properties();
                try (Reader r = Files.newBufferedReader(file)) { p.load(r); }
                for (String k : p.stringPropertyNames()) v.put(k, p.getProperty(k));
            } else {
                Object doc;
                try (Reader r = Files.newBufferedReader(file)) { doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(r); }
                if (doc != null && !(doc instanceof Map)) throw new ConfigException(file + ": expected a mapping of settings at the top level");
                if (doc != null) flatten("", (Map<?, ?>) doc, v, file.toString());
            }
        }
        return build(v, overrides);
    }

    public static Config build(Map<String, String> base, List<String> overrides) {
        Map<String, String> v = new LinkedHashMap<>(base);
        for (String o : overrides) {
            int eq = o.indexOf('=');
            if (eq <= 0) throw new ConfigException("--set expects key=value, got '" + o + "'");
            v.put(o.substring(0, eq).trim(), o.substring(eq + 1).trim());
        }
        for (String k : v.keySet()) validateKey(k, v.get(k));
        return new Config(v);
    }

    private static void flatten(String prefix, Map<?, ?> m, Map<String, String> out, String src) {
        for (var e : m.entrySet()) {
            String k = prefix + e.getKey();
            Object val = e.getValue();
            if (val instanceof Map<?, ?> sub) flatten(k + ".", sub, out, src);
            else if (val instanceof List<?> l) {
                List<String> parts = new ArrayList<>();
                for (Object x : l) parts.add(String.valueOf(x));
                out.put(k, String.join(",", parts));
            } else out.put(k, val == null ? "" : String.valueOf(val));
        }
    }

    private static void validateKey(String key, String value) {
        String k = key;
        if (k.startsWith("site.")) {
            int dot = k.indexOf('.', 5);
            if (dot < 0) throw new ConfigException("'" + key + "': expected site.SITE.KEY");
            k = k.substring(dot + 1);
        }
        if (Settings.isPatternKey(k)) return;
        Setting s = Settings.get(k);
        if (s == null) throw new ConfigException("unknown setting '" + key + "' (see docs/config.md for the keys)");
        if (!s.allowed().isEmpty() && !s.allowed().contains(value))
            throw new ConfigException("setting '" + key + "' is '" + value + "', expected one of " + s.allowed());
    }

    /** The value for {@code key}: explicit, else the registry default; null if neither. */
    public String get(String key) {
        String v = values.get(key);
        if (v != null) return v;
        Setting s = Settings.get(key);
        return s == null ? null : s.defaultValue();
    }

    public int getInt(String key) {
        String v = get(key);
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new ConfigException("setting '" + key + "' is '" + v + "', expected an integer");
        }
    }

    public double getDouble(String key) {
        String v = get(key);
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new ConfigException("setting '" + key + "' is '" + v + "', expected a number");
        }
    }

    /** The configuration as one site sees it: {@code site.SITE.KEY} wins over {@code KEY}. */
    public Config forSite(String site) {
        Map<String, String> v = new LinkedHashMap<>(values);
        String p = "site." + site + ".";
        for (var e : values.entrySet()) if (e.getKey().startsWith(p)) v.put(e.getKey().substring(p.length()), e.getValue());
        return new Config(v);
    }

    /** A copy with more overrides. */
    public Config with(List<String> overrides) { return build(values, overrides); }

    public Map<String, String> explicit() { return new TreeMap<>(values); }

    /** Every registry key with its effective value (for SHOW CONFIG and logs). */
    public Map<String, String> effective() {
        Map<String, String> m = new LinkedHashMap<>();
        for (Setting s : Settings.ALL) m.put(s.key(), get(s.key()));
        return m;
    }

    public static final class ConfigException extends IllegalArgumentException {
        public ConfigException(String msg) { super(msg); }
    }
}
