package pluginhost_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
)

// tester73 #3: a provider filter plugin that panics on every call logs
// its "panic in plugin code" lines bounded (1, 2, 4 ... with suppressed),
// the goroutine stack once, not a stack per call (7 MB in 2 s).
func TestPanickingFilterPluginDoesNotFloodTheLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat, log := moodyHost(t, "filter", map[string]string{"F_MODE": "panic"})
	ref := refer(t, ctx, bundle.Catalogs(), echoProviders(t, ctx, cat), "airnode:///demo.Echo?retries=0")
	const calls = 300
	for i := range calls {
		if _, err := ref.Invoke(ctx, "Echo", "hi"); err == nil || !strings.Contains(err.Error(), "moody: asked to panic") {
			t.Fatalf("call %d: %v; want the filter's panic", i, err)
		}
	}
	waitLog(t, log.String, "suppressed=")
	out := log.String()
	// 1, 2, 4 ... 256: 9 lines for 300 panics within 10 s (more when the
	// machine is so slow that 10 s passed)
	if n := strings.Count(out, `msg="panic in plugin code"`); n < 1 || n > 12 {
		t.Errorf("%d panics logged %d lines; want at most 12:\n%s", calls, n, out)
	}
	if n := strings.Count(out, "stack="); n < 1 || n > 2 {
		t.Errorf("%d panics logged %d stacks; want one (per burst):\n%s", calls, n, out)
	}
}

// tester73 #3, #6: a balancer plugin whose Select panics on every call is
// bypassed after three in a row, as a hung one is; the calls go on with
// the default balancer; the warnings say it panicked, with CLIENT_ERROR
// (a consumer-side event), not that it is unavailable with SERVER_ERROR.
func TestPanickingBalancerPluginIsBypassed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cat, log := moodyHost(t, "loadbalance", map[string]string{"LB_MODE": "panic"})
	ref := refer(t, ctx, cat, echoProviders(t, ctx, nil), "airnode:///demo.Echo?loadbalance=acme.moody")
	for i := range 300 {
		if v, err := ref.Invoke(ctx, "Echo", "hi"); err != nil || v != "hi" {
			t.Fatalf("call %d: %v, %v; want the default balancer's call to pass", i, v, err)
		}
	}
	waitLog(t, log.String, "plugin balancer keeps failing")
	out := log.String()
	for _, want := range []string{
		`msg="plugin balancer keeps failing; the next calls use the default balancer for the bypass, then one probes the plugin again" component="plugin host" plugin=acme.moody point=loadbalance call=Select failures_in_a_row=3`,
		`msg="plugin balancer panicked in Select; using the default balancer" component="plugin host" plugin=acme.moody point=loadbalance err="CLIENT_ERROR: pluginrpc: balancer \"acme.moody\" panicked in Select: moody: Select asked to panic"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
	// three panics, then one per probe (1 s, 2 s, 4 s ... bypasses)
	if n := strings.Count(out, `msg="panic in plugin code"`); n > 8 {
		t.Errorf("300 calls asked the plugin %d times; want it bypassed after 3:\n%s", n, out)
	}
	if strings.Contains(out, "SERVER_ERROR") || strings.Contains(out, "unavailable") {
		t.Errorf("a consumer-side balancer panic is told with SERVER_ERROR or as unavailable:\n%s", out)
	}
}

// waitLog waits, up to 10 s, for the log to hold s (the plugin's lines
// reach the host's log through its stderr).
func waitLog(t *testing.T, log func() string, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log(), s); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log has no %q within 10 s:\n%s", s, log())
		}
	}
}
