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
)

// fix-bg (fix-bd leftover): the file's protocol: {timestamp: 1} (and a
// service's params, and side, methods, pid) was replaced at export
// without a word, as AIRNODE_CONSUMER_PID and consumer: {pid: 7} were on
// a reference, though AIRNODE_PROVIDER_TIMESTAMP was warned of and serve
// -p refused. Every key the kernel sets itself is left out with one
// line naming where it was given; a reference's methods is its own.
func TestBG_FrameworkSetKeysAreIgnored(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plugins.yaml")
	body := "protocol: {timestamp: \"1\", weight: \"3\", methods: X}\n" +
		"services: [{interface: demo.Echo, params: {pid: abc, group: g}}]\n" +
		"consumer: {pid: \"7\", methods: Echo, retries: \"1\"}\n" +
		"references: [{interface: demo.Echo, params: {side: provider, timestamp: \"9\"}}]\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"AIRNODE_CONSUMER_PID=3", "AIRNODE_CONSUMER_SIDE=provider", "AIRNODE_CONSUMER_TIMESTAMP=5",
		"AIRNODE_CONSUMER_METHODS=Echo", "AIRNODE_CONSUMER_TIMEOUT=2s"}
	var log bytes.Buffer
	cfg, err := config.Load(config.Source{File: file, Environ: env, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	prov := "is set by the provider at export and cannot be given (provider-set keys: timestamp, side, methods, pid)"
	cons := "is set by the consumer at refer and cannot be given (consumer-set keys: timestamp, side, pid)"
	wantFile := []string{
		file + ": protocol.methods is ignored: methods " + prov,
		file + ": protocol.timestamp is ignored: timestamp " + prov,
		file + ": services[0].params.pid is ignored: pid " + prov,
		file + ": consumer.pid is ignored: pid " + cons,
		file + ": references[0].params.side is ignored: side " + cons,
		file + ": references[0].params.timestamp is ignored: timestamp " + cons,
	}
	if got := cfg.IgnoredKeys(); !slices.Equal(got, wantFile) {
		t.Errorf("IgnoredKeys:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantFile, "\n"))
	}
	wantEnv := []string{
		"AIRNODE_CONSUMER_PID is ignored: pid " + cons,
		"AIRNODE_CONSUMER_SIDE is ignored: side " + cons,
		"AIRNODE_CONSUMER_TIMESTAMP is ignored: timestamp " + cons,
	}
	if got := config.EnvWarnings(env, nil); !slices.Equal(got, wantEnv) {
		t.Errorf("EnvWarnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEnv, "\n"))
	}
	for _, w := range append(wantFile, wantEnv...) {
		if !strings.Contains(log.String(), fmt.Sprintf("msg=%q component=config", w)) {
			t.Errorf("Load's log lacks %q:\n%s", w, log.String())
		}
	}
	// left out; the rest kept, a reference's methods included
	if fmt.Sprint(cfg.Protocol) != "map[weight:3]" || fmt.Sprint(cfg.Services[0].Params) != "map[group:g]" ||
		fmt.Sprint(cfg.Consumer) != "map[methods:Echo retries:1 timeout:2s]" || len(cfg.References[0].Params) != 0 {
		t.Errorf("protocol %v, service params %v, consumer %v, reference params %v", cfg.Protocol, cfg.Services[0].Params, cfg.Consumer, cfg.References[0].Params)
	}
	if len(cfg.UnknownEnv) != 0 {
		t.Errorf("UnknownEnv %v; want none", cfg.UnknownEnv)
	}
	if got := config.ConsumerSetKeys(); !slices.Equal(got, []string{"timestamp", "side", "pid"}) {
		t.Errorf("ConsumerSetKeys() = %v", got)
	}
}
