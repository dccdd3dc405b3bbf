package org.wanrep.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConfigTest {
    @Test
    void yamlThenOverridesThenPerSite(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("wanrep.yaml");
        Files.writeString(f, """
                delivery: opt-safe
                latency_matrix: na4
                proxy:
                  port: 7000
                site:
                  boston:
                    proxy:
                      port: 7001
                """);
        Config c = Config.load(f, List.of("execution=symmetric", "queries=locked"));
        assertThat(c.get("delivery")).isEqualTo("opt-safe");
        assertThat(c.get("queries")).isEqualTo("locked");
        assertThat(c.getInt("proxy.port")).isEqualTo(7000);
        assertThat(c.forSite("boston").getInt("proxy.port")).isEqualTo(7001);
        assertThat(c.forSite("chicago").getInt("proxy.port")).isEqualTo(7000);
        assertThat(c.getInt("pool.size")).isEqualTo(16);
    }

    @Test
    void propertiesFilesWorkToo(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("wanrep.properties");
        Files.writeString(f, "delivery=agreed\nfunctions.shopping_cart.writes=shopping_cart,shopping_cart_line\n");
        Config c = Config.load(f, List.of());
        assertThat(c.get("delivery")).isEqualTo("agreed");
        assertThat(c.get("functions.shopping_cart.writes")).isEqualTo("shopping_cart,shopping_cart_line");
    }

    @Test
    void badSettingsFailFastNamingTheKey() {
        assertThatThrownBy(() -> Config.build(java.util.Map.of(), List.of("delivry=safe"))).hasMessageContaining("unknown setting 'delivry'");
        assertThatThrownBy(() -> Config.build(java.util.Map.of(), List.of("delivery=fast"))).hasMessageContaining("expected one of [agreed, safe, opt-safe]");
        assertThatThrownBy(() -> Config.build(java.util.Map.of(), List.of("noequals"))).hasMessageContaining("key=value");
        assertThatThrownBy(() -> Config.build(java.util.Map.of(), List.of("pool.size=many")).getInt("pool.size")).hasMessageContaining("expected an integer");
        assertThat(Settings.markdown()).contains("`delivery`");
    }

    /** docs/config.md is generated from the registry: it must show every key as the code knows it. */
    @Test
    void configDocumentationIsCurrent() throws Exception {
        String doc = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "config.md"));
        assertThat(doc).as("docs/config.md is stale: regenerate its table from Settings.markdown()").contains(Settings.markdown());
    }
}
