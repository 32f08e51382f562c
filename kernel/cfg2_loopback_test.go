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
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// cfg2Echo is a one-method service for the loopback-warning test.
type cfg2Echo struct{}

func (cfg2Echo) Echo(_ context.Context, s string) (string, error) { return s, nil }

// A Go program that loads plugins.yaml (listen on 127.0.0.1, a ZooKeeper
// registry) and exports through kernel.Node gets the loopback warning
// serve gives: one Warn per registry and published address, however many
// services share the address, naming why the address is loopback and
// what publishes another. A file registry (one machine's directory) logs
// it at Debug only; memory:// not at all. Real ZooKeeper on 127.0.0.1.
func TestCfg2_LoopbackPublishedWarnsOnce(t *testing.T) {
	zk, err := zktest.StartTick(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer zk.Close()
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	body := "listen: 127.0.0.1:0\nregistry: " + zk.URL("session.timeout=4s") + "\nservices: [{interface: t.A}, {interface: t.B}]\n"
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{File: file})
	if err != nil {
		t.Fatal(err)
	}

	export := func(reg string, urls ...string) (string, []*kernel.Exporter) {
		t.Helper()
		var log logbuf.Buffer
		n := kernel.NewNode(bundle.Catalogs(), kernel.WithRegistry(spi.MustParse(reg)), kernel.WithShutdownWait(0),
			kernel.WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		t.Cleanup(func() { _ = n.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var exps []*kernel.Exporter
		for _, u := range urls {
			e, err := n.Export(ctx, cfg2Echo{}, spi.MustParse(u))
			if err != nil {
				t.Fatalf("export %s: %v", u, err)
			}
			exps = append(exps, e)
		}
		return log.String(), exps
	}

	// the configuration's two services on one address, as a Go main exports them
	var urls []string
	for _, s := range cfg.Services {
		u, err := cfg.ExportURL(s)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, u.String())
	}
	urls = append(urls, "airnode://127.0.0.1:0/t.C?advertise=127.0.0.2")
	log, exps := export(cfg.Registry, urls...)
	const warning = "publishing a loopback address, "
	lines := cfg2Lines(log, warning)
	if len(lines) != 2 {
		t.Fatalf("%d loopback warnings for 2 published addresses, want 2:\n%s", len(lines), log)
	}
	for i, want := range []string{
		"level=WARN msg=\"" + warning + exps[0].URL().Address() + ", to a registry other hosts read: it listens on a loopback address (127.0.0.1:0)",
		"level=WARN msg=\"" + warning + exps[2].URL().Address() + ", to a registry other hosts read: it is the address advertised (URL key advertise)",
	} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "serve --advertise HOST[:PORT], config key advertise, AIRNODE_ADVERTISE") ||
			!strings.Contains(lines[i], "registry=\""+zk.URL("")) {
			t.Errorf("line %d:\n%s\nlacks %q, the advice or the registry", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], "service=t.A") {
		t.Errorf("the first warning does not name the first service: %s", lines[0])
	}

	log, _ = export("file://"+t.TempDir(), "airnode://127.0.0.1:0/t.A", "airnode://127.0.0.1:0/t.B")
	if lines := cfg2Lines(log, warning); len(lines) != 1 || !strings.Contains(lines[0], "level=DEBUG") {
		t.Errorf("file registry: want one Debug line:\n%s", log)
	}
	log, _ = export("memory://", "airnode://127.0.0.1:0/t.A")
	if lines := cfg2Lines(log, warning); len(lines) != 0 {
		t.Errorf("memory registry: want no line:\n%s", log)
	}
}

// cfg2Lines returns the lines of log containing s.
func cfg2Lines(log, s string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}
