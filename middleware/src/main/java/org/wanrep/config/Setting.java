package org.wanrep.config;

import java.util.List;

/** One configuration key: its default (null = required or derived), description and allowed values. */
public record Setting(String key, String defaultValue, String description, List<String> allowed) {
    public static Setting of(String key, String def, String description) { return new Setting(key, def, description, List.of()); }
    public static Setting choice(String key, String def, String description, String... allowed) { return new Setting(key, def, description, List.of(allowed)); }
}
