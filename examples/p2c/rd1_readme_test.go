package p2c_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel/config"
)

// The plugins.yaml of this example's README loads and passes the check
// serve makes before starting plugins (tester37 F2: it declared
// "name: p2c", which shadows the bundled p2c and is refused), and the
// URL it tells users to write names the declared plugin.
func TestRD1_ReadmePluginsYAMLIsAccepted(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no yaml block")
	}
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(block, "<output of sha256sum>", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{File: file})
	if err != nil {
		t.Fatalf("README's plugins.yaml: %v\n%s", err, block)
	}
	if len(cfg.Plugins) != 1 {
		t.Fatalf("plugins %+v, want one", cfg.Plugins)
	}
	if err := cfg.CheckPluginNames(bundle.Catalogs(), file); err != nil {
		t.Fatalf("README's plugins.yaml is refused: %v", err)
	}
	name := cfg.Plugins[0].Name
	if !strings.Contains(string(readme), "`?loadbalance="+name+"`") {
		t.Errorf("README declares the plugin %q but never shows ?loadbalance=%s", name, name)
	}
	// What it said before is refused, as the README now says.
	cfg.Plugins[0].Name = "p2c"
	if err := cfg.CheckPluginNames(bundle.Catalogs(), file); err == nil || !strings.Contains(err.Error(), `plugin "p2c" may not shadow the bundled loadbalance "p2c"`) {
		t.Fatalf("name p2c: %v, want refused", err)
	}
}
