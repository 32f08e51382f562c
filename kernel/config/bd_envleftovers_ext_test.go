package config_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
	"github.com/spf13/pflag"
)

// tester84 #3, #6: a variable Load reads but ignores (set but empty, or
// AIRNODE_PROVIDER_<KEY> for a key the provider sets at export) is
// reported by EnvWarnings and logged by Load; the provider-set one does
// not reach Protocol. A misspelt variable is UnknownEnv's, not
// EnvWarnings'.
func TestBD_EnvWarnings(t *testing.T) {
	env := []string{"AIRNODE_REGISTRY=", "AIRNODE_CONSUMER_TIMEOUT=", "AIRNODE_PROVIDER_TIMESTAMP=1",
		"AIRNODE_PROVIDER_PID=", "AIRNODE_CONSUMER_TIMOUT=", "AIRNODE_PROVIDER_WEIGHT=7", "AIRNODE_LISTEN=:1", "HOME="}
	got := config.EnvWarnings(env, nil)
	want := []string{
		"AIRNODE_CONSUMER_TIMEOUT is set but empty: ignored as if unset; URL key timeout of every reference comes from the configuration file's consumer: section or the default",
		"AIRNODE_PROVIDER_PID is ignored: pid is set by the provider at export and cannot be given (provider-set keys: timestamp, side, methods, pid)",
		"AIRNODE_PROVIDER_TIMESTAMP is ignored: timestamp is set by the provider at export and cannot be given (provider-set keys: timestamp, side, methods, pid)",
		"AIRNODE_REGISTRY is set but empty: ignored as if unset; registry comes from --registry, the configuration file or the default (the file registry)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("EnvWarnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	var log bytes.Buffer
	cfg, err := config.Load(config.Source{Environ: env, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.Protocol["timestamp"]; ok || cfg.Protocol["weight"] != "7" {
		t.Errorf("protocol %v: want weight 7 and no timestamp", cfg.Protocol)
	}
	for _, w := range want {
		if !strings.Contains(log.String(), fmt.Sprintf("msg=%q component=config", w)) {
			t.Errorf("Load's log lacks %q:\n%s", w, log.String())
		}
	}
	if !slices.Equal(cfg.UnknownEnv, []string{"AIRNODE_CONSUMER_TIMOUT"}) {
		t.Errorf("UnknownEnv %v, want the misspelt one only", cfg.UnknownEnv)
	}
}

// tester84 #5: Load records where each setting and each protocol key came
// from, so that list --explain can name the variable.
func TestBD_Sources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	if err := os.WriteFile(file, []byte("listen: 127.0.0.1:7000\nprotocol: {warmup: 1m}\nshutdown: {wait: 1s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	config.AddFlags(fs)
	if err := fs.Parse([]string{"--shutdown-wait", "500ms"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.Source{File: file, Flags: fs, Logger: slog.New(slog.DiscardHandler),
		Environ: []string{"AIRNODE_REGISTRY=memory://", "AIRNODE_SHUTDOWN_WAIT=2s", "AIRNODE_PROVIDER_WEIGHT=7"}})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"registry": "env AIRNODE_REGISTRY", "shutdown.wait": "flag --shutdown-wait", "listen": file, "shutdown.timeout": "", "demo": "",
	} {
		if got := cfg.SettingSource(key); got != want {
			t.Errorf("SettingSource(%q) = %q, want %q", key, got, want)
		}
	}
	for key, want := range map[string]struct {
		name string
		env  bool
	}{"weight": {"AIRNODE_PROVIDER_WEIGHT", true}, "warmup": {"protocol.warmup", false}, "timeout": {"", false}} {
		if name, env := cfg.ProtocolSource(key); name != want.name || env != want.env {
			t.Errorf("ProtocolSource(%q) = %q, %v; want %q, %v", key, name, env, want.name, want.env)
		}
	}
}
