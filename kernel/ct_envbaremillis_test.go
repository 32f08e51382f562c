package kernel_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// ctBareNote is the kernel's warning of key=n, a bare number likely meant
// as seconds (spi.BareMillis's words after "key=").
func ctBareNote(key, n string) string {
	return key + "=" + n + " is " + n + "ms (a bare number is milliseconds, as in Dubbo); write " + n + "s for seconds"
}

// ctLoad writes yaml (none when "") to a plugins.yaml and loads it with
// environ, as a Go program's main does.
func ctLoad(t *testing.T, yaml string, environ ...string) (config.Config, error) {
	t.Helper()
	src := config.Source{Environ: environ, Logger: slog.New(slog.NewTextHandler(&logbuf.Buffer{}, nil))}
	if yaml != "" {
		src.File = filepath.Join(t.TempDir(), "plugins.yaml")
		if err := os.WriteFile(src.File, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return config.Load(src)
}

// ctExport exports cfg's services (its demo one when it has none) on a
// node of its own, closed at the test's end, and returns the node's log
// and the URLs it gave Export (Config.ExportURL's).
func ctExport(t *testing.T, cfg config.Config) (string, []spi.URL) {
	t.Helper()
	var log logbuf.Buffer
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithRegistry(spi.MustParse("memory://ct")), kernel.WithShutdownWait(0),
		kernel.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	t.Cleanup(func() { _ = n.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	services := cfg.Services
	if len(services) == 0 {
		services = []config.Service{{Interface: "t.Ct"}}
	}
	var urls []spi.URL
	for _, s := range services {
		u, err := cfg.ExportURL(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Export(ctx, cfg2Echo{}, u); err != nil {
			t.Fatalf("export %s: %v", u, err)
		}
		urls = append(urls, u)
	}
	return log.String(), urls
}

// fix-ct: AIRNODE_PROVIDER_TIMEOUT=5 and AIRNODE_CONSUMER_TIMEOUT=5 reached
// Export and Refer as "5ms" (config.Load rewrote the bare number), so the
// kernel's warning of timeout=5 never fired for a Go program, and the
// exported URL said 5ms where the variable said 5. Load keeps the value as
// written: Export and Refer warn once, the URL carries timeout=5, and
// Validate still passes. 5000 (over the cut-off) and 5s are not warned of;
// abc is Load's error naming the variable, as before.
func TestCT_EnvBareMillisWarnedByExportAndRefer(t *testing.T) {
	cfg, err := ctLoad(t, "listen: 127.0.0.1:0\n", "AIRNODE_PROVIDER_TIMEOUT=5", "AIRNODE_CONSUMER_TIMEOUT=5")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate after Load: %v; want nil (a variable's bare milliseconds are a URL's)", err)
	}
	if cfg.Protocol["timeout"] != "5" || cfg.Consumer["timeout"] != "5" {
		t.Errorf("Protocol %v, Consumer %v; want timeout 5 as written", cfg.Protocol, cfg.Consumer)
	}
	log, urls := ctExport(t, cfg)
	if c := strings.Count(log, ctBareNote("timeout", "5")); c != 1 {
		t.Errorf("export warned %d times of timeout=5, want once:\n%s", c, log)
	}
	if got := urls[0].ParamOr("timeout", ""); got != "5" {
		t.Errorf("ExportURL's timeout=%q; want 5, as the variable wrote it: %s", got, urls[0])
	}

	var rlog logbuf.Buffer
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(slog.New(slog.NewTextHandler(&rlog, nil))))
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, _ := cfg.ApplyReference(spi.MustParse("airnode://127.0.0.1:40010/t.Ct"))
	r, err := n.Refer(ctx, u, spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	if c := strings.Count(rlog.String(), ctBareNote("timeout", "5")); c != 1 {
		t.Errorf("refer warned %d times of timeout=5, want once:\n%s", c, rlog.String())
	}

	for _, v := range []string{"5000", "5s"} {
		cfg, err := ctLoad(t, "listen: 127.0.0.1:0\n", "AIRNODE_PROVIDER_TIMEOUT="+v)
		if err != nil {
			t.Fatal(err)
		}
		if log, _ := ctExport(t, cfg); strings.Contains(log, "a bare number is milliseconds") {
			t.Errorf("AIRNODE_PROVIDER_TIMEOUT=%s warned of:\n%s", v, log)
		}
	}
	_, err = ctLoad(t, "", "AIRNODE_PROVIDER_TIMEOUT=abc")
	if want := `config: environment AIRNODE_PROVIDER_TIMEOUT: invalid value "abc" for URL key "timeout"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("AIRNODE_PROVIDER_TIMEOUT=abc: %v; want %q", err, want)
	}
}

// plugins.yaml's params refuse a bare number for a duration, small or
// large (timeout: 5, timeout: 5000: a configuration file wants a unit),
// so the file gives no bare millisecond for Export to warn of: one error,
// no warning. timeout: 5s exports silently.
func TestCT_YAMLBareMillisRefusedAndUnitSilent(t *testing.T) {
	for _, v := range []string{"5", "5000"} {
		_, err := ctLoad(t, "listen: 127.0.0.1:40012\nservices: [{interface: t.Ct, params: {timeout: "+v+"}}]\n")
		want := `key "services[0].params": invalid value "` + v + `" for URL key "timeout": want a duration with a unit`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("params timeout: %s: %v; want %q", v, err, want)
		}
	}
	cfg, err := ctLoad(t, "listen: 127.0.0.1:40012\nservices: [{interface: t.Ct, params: {timeout: 5s}}]\n")
	if err != nil {
		t.Fatal(err)
	}
	log, urls := ctExport(t, cfg)
	if strings.Contains(log, "a bare number is milliseconds") {
		t.Errorf("timeout: 5s warned of:\n%s", log)
	}
	if got := urls[0].ParamOr("timeout", ""); got != "5s" {
		t.Errorf("ExportURL's timeout=%q; want 5s", got)
	}
}
