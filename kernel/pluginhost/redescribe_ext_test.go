package pluginhost_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// fix-r leftover (fix-x #2): a filter plugin's activation (sides, key,
// order) follows the running process, as its Chain does: the kernel
// chooses the filters of each Refer and Export by it, so a SIGTERM
// handover into a build declaring key "acme.b", consumer side only
// (testdata/keyfilter2) activates the filter on URLs with acme.b and no
// longer on those with acme.a, and the host warns naming the old and the
// new activation. While the plugin is down (its binary replaced by one
// that cannot start) the last process's activation stays. Before, the
// first process's key, sides and order stayed until the host restarted.
func TestFilterActivationFollowsTheRunningBuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyfilter")
	testbin.ReplaceFile(t, binary("keyfilter"), path)
	var log logbuf.Buffer
	h, cat, err := startHostLogging(t, slog.New(slog.NewTextHandler(&log, nil)),
		config.Plugin{Name: "acme.keys", Point: pluginrpc.PointFilter, Command: path})
	if err != nil {
		t.Fatal(err)
	}
	activated := func(key string, side spi.Side) bool {
		t.Helper()
		names, err := extension.FilterNames(cat.Filter, spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?"+key+"=on"), side, "")
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(names, "acme.keys")
	}
	want := func(when string, key string, side spi.Side, on bool) {
		t.Helper()
		if got := activated(key, side); got != on {
			t.Errorf("%s: a %s URL with %s activates the filter: %v, want %v", when, side, key, got, on)
		}
	}
	want("first build", "acme.a", spi.Consumer, true)
	want("first build", "acme.a", spi.Provider, true)
	want("first build", "acme.b", spi.Consumer, false)

	handOver(t, h, "acme.keys", path, "keyfilter2")
	want("after the handover to the build declaring acme.b", "acme.a", spi.Consumer, false)
	want("after the handover to the build declaring acme.b", "acme.b", spi.Consumer, true)
	want("after the handover to the build declaring acme.b", "acme.b", spi.Provider, false)
	fb, err := cat.Filter.Get("acme.keys")
	if err != nil {
		t.Fatal(err)
	}
	if o := fb.Activation().Order; o != 7 {
		t.Errorf("after the handover: Activation().Order = %d, want the new build's 7", o)
	}
	text := log.String()
	var warned string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "declares another activation") {
			warned = l
		}
	}
	for _, s := range []string{"level=WARN", "plugin=acme.keys", `key \"acme.a\"`, `key \"acme.b\"`, "[consumer provider]", "order 7", "restart the node", "filter=acme.keys"} {
		if !strings.Contains(warned, s) {
			t.Errorf("the warning about the new activation lacks %q: %q\nlog:\n%s", s, warned, text)
		}
	}

	// Down: the last process's activation stays, not the first's.
	killIntoBrokenBuild(t, h, "acme.keys", path)
	want("while down", "acme.b", spi.Consumer, true)
	want("while down", "acme.a", spi.Consumer, false)
}

// fix-r leftover (fix-x #1): whether the host sends a balancer plugin's
// Select the call's arguments follows the running process. The plugin
// (testdata/argslb) picks the candidate its first argument names, and
// candidate 0 when it gets none; noargslb, its other build, picks alike
// but says it does not read them (ReadsArguments false). Handed over on
// SIGTERM from one build to the other, the picks follow the new build:
// argslb gets the argument (a consistent hash on an argument needs it),
// noargslb gets none. Before, the first process's WithoutArgs stayed:
// argslb after noargslb picked 0, noargslb after argslb picked 3.
func TestBalancerWithoutArgsFollowsTheRunningBuild(t *testing.T) {
	for _, tc := range []struct {
		first, then         string
		firstPick, thenPick int
	}{
		{"noargslb", "argslb", 0, 3},
		{"argslb", "noargslb", 3, 0},
	} {
		t.Run(tc.first+"_to_"+tc.then, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "argslb")
			testbin.ReplaceFile(t, binary(tc.first), path)
			var log logbuf.Buffer
			h, cat, err := startHostLogging(t, slog.New(slog.NewTextHandler(&log, nil)),
				config.Plugin{Name: "acme.args", Point: pluginrpc.PointLoadBalance, Command: path})
			if err != nil {
				t.Fatal(err)
			}
			b, err := cat.LoadBalance.Get("acme.args")
			if err != nil {
				t.Fatal(err)
			}
			lb, err := b.Build(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?loadbalance=acme.args&timeout=20s"))
			if err != nil {
				t.Fatal(err)
			}
			clb, ok := lb.(spi.ContextLoadBalance)
			if !ok {
				t.Fatalf("%T is not an spi.ContextLoadBalance", lb)
			}
			invokers := make([]spi.Invoker, 8)
			for i := range invokers {
				invokers[i] = spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:%d/demo.Echo?timeout=20s", 31400+i)), nil)
			}
			want := func(when string, i int) {
				t.Helper()
				for range 10 { // a fallback's random pick matching 10 times running: 8^-10
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					x, err := clb.SelectContext(ctx, invokers, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"3"}})
					cancel()
					if err != nil {
						t.Fatalf("%s: Select: %v", when, err)
					}
					if got := slices.Index(invokers, x); got != i {
						t.Fatalf("%s: Select picked candidate %d, want %d\nlog:\n%s", when, got, i, log.String())
					}
				}
			}
			want("first build, "+tc.first, tc.firstPick)

			handOver(t, h, "acme.args", path, tc.then)
			want("after the handover to "+tc.then, tc.thenPick)
			if !strings.Contains(log.String(), "the host s") || !strings.Contains(log.String(), "from the next call") {
				t.Errorf("no line says the new process reads the arguments otherwise:\n%s", log.String())
			}
		})
	}
}

// fix-ab #1: the URL keys a plugin declares follow the running process,
// as its activation and WithoutArgs do (one mechanism, DescribedSource):
// handed over on SIGTERM from argslb (declares acme.args.first) to
// noargslb (declares acme.args.spread), the catalog's Describe (what
// airnode list and --explain print) and the keys the unknown-key
// warnings count (kernel.KnownKeys) name acme.args.spread and no longer
// acme.args.first, and the host warns naming both. While the plugin is
// down the last process's keys stay. Before, the first process's keys
// stayed until the host restarted.
func TestPluginKeysFollowTheRunningBuild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "argslb")
	testbin.ReplaceFile(t, binary("argslb"), path)
	var log logbuf.Buffer
	h, cat, err := startHostLogging(t, slog.New(slog.NewTextHandler(&log, nil)),
		config.Plugin{Name: "acme.args", Point: pluginrpc.PointLoadBalance, Command: path})
	if err != nil {
		t.Fatal(err)
	}
	want := func(when string, declared, not string) {
		t.Helper()
		var keys []string
		for _, p := range cat.Describe() {
			for _, e := range p.Extensions {
				if p.Name == extension.PointLoadBalance && e.Name == "acme.args" {
					for _, k := range e.Keys {
						keys = append(keys, k.Key)
					}
				}
			}
		}
		if !slices.Equal(keys, []string{declared}) {
			t.Errorf("%s: Describe lists the keys %q of acme.args, want [%q]", when, keys, declared)
		}
		known := kernel.KnownKeys(cat)
		if !slices.Contains(known, declared) || slices.Contains(known, not) {
			t.Errorf("%s: the known keys hold %q: %v, %q: %v; want true, false",
				when, declared, slices.Contains(known, declared), not, slices.Contains(known, not))
		}
	}
	want("first build", "acme.args.first", "acme.args.spread")

	handOver(t, h, "acme.args", path, "noargslb")
	want("after the handover to the build declaring acme.args.spread", "acme.args.spread", "acme.args.first")
	var warned string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "declares other URL keys") {
			warned = l
		}
	}
	for _, s := range []string{"level=WARN", "plugin=acme.args", "added=[acme.args.spread]", "removed=[acme.args.first]"} {
		if !strings.Contains(warned, s) {
			t.Errorf("the warning about the new keys lacks %q: %q\nlog:\n%s", s, warned, log.String())
		}
	}

	// Down: the last process's keys stay, not the first's.
	killIntoBrokenBuild(t, h, "acme.args", path)
	want("while down", "acme.args.spread", "acme.args.first")
}

// killIntoBrokenBuild replaces the binary at path, which plugin name runs,
// with one that cannot start, kills the running process and waits until
// the host no longer says the plugin runs: it is down, restarting in vain.
func killIntoBrokenBuild(t *testing.T, h *pluginhost.Host, name, path string) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	testbin.ReplaceFile(t, script, path)
	pid := info(t, h, name).PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, 10*time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for info(t, h, name).State == pluginhost.StateRunning {
		if time.Now().After(deadline) {
			t.Fatalf("plugin still running after its process was killed: %+v", info(t, h, name))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// handOver replaces the binary at path, which plugin name runs, with the
// test binary build, and hands the plugin over to it (SIGTERM to the
// running process: the host starts the new one, which takes over).
func handOver(t *testing.T, h *pluginhost.Host, name, path, build string) {
	t.Helper()
	testbin.ReplaceFile(t, binary(build), path)
	old := info(t, h, name).PID
	if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, h, name, old)
	waitGone(t, old, 10*time.Second)
}
