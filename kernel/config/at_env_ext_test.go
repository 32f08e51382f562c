package config_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
)

// tester79 #3: AIRNODE_CONSUMER_<KEY> sets a URL key of every reference
// over the file's consumer: section, below a reference's params and the
// URL's own keys; AIRNODE_PROVIDER_<KEY> likewise for every export over
// protocol:. The variable names its key through the key catalog
// (Source.Keys), '_' standing for '.'.
func TestAT_ConsumerEnvironment(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	body := "consumer: {timeout: 5s, retries: \"3\", loadbalance: random}\nprotocol: {weight: \"50\"}\nreferences: [{interface: shop.Orders, params: {retries: \"0\"}}]\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"AIRNODE_CONSUMER_TIMEOUT=2000", "AIRNODE_CONSUMER_RETRIES=1", "AIRNODE_CONSUMER_RETRY_TOKENS=10", "AIRNODE_PROVIDER_WEIGHT=200"}
	cfg, err := config.Load(config.Source{File: file, Environ: env, Keys: []string{"timeout", "retries", "retry.tokens", "weight", "loadbalance"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Consumer; got["timeout"] != "2000" || got["retries"] != "1" || got["retry.tokens"] != "10" || got["loadbalance"] != "random" {
		t.Errorf("Consumer = %v; want timeout 2000 (the variable's as written), retries 1 (environment over file), retry.tokens 10, loadbalance random (file)", got)
	}
	if cfg.Protocol["weight"] != "200" {
		t.Errorf("Protocol = %v; want weight 200 from AIRNODE_PROVIDER_WEIGHT", cfg.Protocol)
	}
	if cfg.UnknownEnv != nil {
		t.Errorf("UnknownEnv = %v; want none", cfg.UnknownEnv)
	}
	u, added := cfg.ApplyReference(mustParse(t, "airnode:///shop.Orders?loadbalance=roundrobin"))
	if got := u.ParamOr("timeout", ""); got != "2000" {
		t.Errorf("timeout %q; want the environment's 2000", got)
	}
	if got := u.ParamOr("retries", ""); got != "0" {
		t.Errorf("retries %q; want the reference's 0 over the environment's", got)
	}
	if got := u.ParamOr("loadbalance", ""); got != "roundrobin" {
		t.Errorf("loadbalance %q; want the URL's own", got)
	}
	if !slices.Equal(added, []string{"retries", "retry.tokens", "timeout"}) {
		t.Errorf("added %v", added)
	}
	exp, err := cfg.ExportURL(config.Service{Interface: "shop.Orders"})
	if err != nil || exp.ParamOr("weight", "") != "200" {
		t.Errorf("ExportURL = %v, %v; want weight 200", exp, err)
	}

	// a bad value names the variable
	_, err = config.Load(config.Source{Environ: []string{"AIRNODE_CONSUMER_TIMEOUT=5x"}})
	if err == nil || !strings.Contains(err.Error(), `config: environment AIRNODE_CONSUMER_TIMEOUT: invalid value "5x" for URL key "timeout"`) {
		t.Errorf("AIRNODE_CONSUMER_TIMEOUT=5x: %v", err)
	}
	// without Source.Keys, the kernel's keys
	cfg, err = config.Load(config.Source{Environ: []string{"AIRNODE_CONSUMER_HEARTBEAT_INTERVAL=30s"}})
	if err != nil || cfg.Consumer["heartbeat.interval"] != "30s" {
		t.Errorf("AIRNODE_CONSUMER_HEARTBEAT_INTERVAL=30s: %v, %v", cfg.Consumer, err)
	}
}

// tester79 #3b: Load ignored a misspelt AIRNODE_ variable silently; the
// CLI warned, a Go program got nothing. Config.UnknownEnv lists them and
// Load warns on Source.Logger (slog.Default() when nil) with a
// did-you-mean.
func TestAT_LoadReportsUnknownEnvironment(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	env := []string{"AIRNODE_REGISTY=zookeeper://h:2181", "AIRNODE_CONSUMER_TIMOUT=1s", "AIRNODE_LISTEN=:0", "AIRNODE_PLUGIN_LOG=debug", "HOME=/root"}
	cfg, err := config.Load(config.Source{Environ: env, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"AIRNODE_CONSUMER_TIMOUT", "AIRNODE_REGISTY"}; !slices.Equal(cfg.UnknownEnv, want) {
		t.Errorf("UnknownEnv = %v; want %v", cfg.UnknownEnv, want)
	}
	// component=config, as every kernel record names its writer, and a
	// msg that does not repeat it (tester84 #8)
	if !strings.Contains(buf.String(), `level=WARN msg="environment variables with the AIRNODE_ prefix that airnode does not read; they have no effect" component=config `) {
		t.Errorf("warning lacks component=config first, or its msg repeats the component:\n%s", buf.String())
	}
	for _, want := range []string{"level=WARN", "AIRNODE_REGISTY: did you mean AIRNODE_REGISTRY?", "AIRNODE_CONSUMER_TIMOUT: did you mean AIRNODE_CONSUMER_TIMEOUT?"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("warning lacks %q:\n%s", want, buf.String())
		}
	}

	// nil Logger: the default logger
	var def bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	defer slog.SetDefault(old)
	if _, err := config.Load(config.Source{Environ: []string{"AIRNODE_REGISTY=x"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def.String(), "AIRNODE_REGISTY: did you mean AIRNODE_REGISTRY?") {
		t.Errorf("default logger got %q", def.String())
	}
}
