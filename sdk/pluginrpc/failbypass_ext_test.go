package pluginrpc_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// tester73 #3, #6: a balancer plugin whose Select panics on every call is
// bypassed after pluginrpc.DefaultFailuresToBypass Selects in a row, as
// one that hangs is (a deterministic panic cost a round trip per call);
// its panic reaches the fallback with the status of a consumer-side event,
// CLIENT_ERROR, naming the plugin as declared.
func TestBalancerPluginThatPanicsIsBypassed(t *testing.T) {
	var ev events
	o := ev.options("acme.zone", startMoody(t, "LB_MODE=panic"))
	o.Bypass = 30 * time.Second // no probe within the test however slow the machine
	lb := build(t, o, "airnode://127.0.0.1/demo.Echo")
	cands := providers("")
	for range 20 {
		if got, err := lb.SelectContext(context.Background(), cands, &spi.Invocation{Method: "Echo"}); err != nil || got != cands[0] && got != cands[1] {
			t.Fatalf("Select = %v, %v; want the fallback's pick of a candidate", got, err)
		}
	}
	bypasses, fallbacks, _ := ev.get()
	if len(fallbacks) != pluginrpc.DefaultFailuresToBypass {
		t.Fatalf("%d fallbacks told of 20 Selects, want %d (then the plugin is bypassed): %v", len(fallbacks), pluginrpc.DefaultFailuresToBypass, fallbacks)
	}
	const want = `CLIENT_ERROR: pluginrpc: balancer "acme.zone" panicked in Select: moody: Select asked to panic`
	var se *spi.Error
	if err := fallbacks[0]; err.Error() != want || !errors.As(err, &se) || se.Status != spi.StatusClientError {
		t.Errorf("fallback: %v; want %s", err, want)
	}
	if len(bypasses) != 1 || bypasses[0].Err == nil || bypasses[0].Failures != pluginrpc.DefaultFailuresToBypass || bypasses[0].For != o.Bypass || bypasses[0].Point != "Select" {
		t.Errorf("bypasses %+v; want one after %d failures, for %v, with the error", bypasses, pluginrpc.DefaultFailuresToBypass, o.Bypass)
	}
}

// tester73 #6: a Select on the connection of a plugin whose process
// exited (the host closed its client) says so, not "context canceled":
// the caller cancelled nothing. The fallback warning calls it unavailable.
func TestBalancerPluginThatExitedIsNotACancel(t *testing.T) {
	cmd := exec.Command(pluginrpc.MoodyBinary)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: pluginrpc.Handshake, VersionedPlugins: pluginrpc.ClientPlugins(), Cmd: cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC}, Logger: hclog.NewNullLogger(),
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rpc.Dispense(pluginrpc.PointLoadBalance)
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	lb := build(t, ev.options("acme.zone", raw.(*pluginrpc.Client)), "airnode://127.0.0.1/demo.Echo")
	client.Kill() // the process exits; its gRPC connection is closed
	cands := providers("")
	if got, err := lb.SelectContext(context.Background(), cands, &spi.Invocation{Method: "Echo"}); err != nil || got == nil {
		t.Fatalf("Select = %v, %v; want the fallback's pick", got, err)
	}
	_, fallbacks, _ := ev.get()
	if len(fallbacks) != 1 || strings.Contains(fallbacks[0].Error(), "context canceled") || !strings.Contains(fallbacks[0].Error(), "plugin process exited") {
		t.Fatalf("fallbacks %v; want one saying the plugin process exited, not context canceled", fallbacks)
	}
	var log bytes.Buffer
	onFallback, _ := pluginrpc.FallbackLog(slog.New(slog.NewTextHandler(&log, nil)))
	onFallback(fallbacks[0])
	if !strings.Contains(log.String(), "plugin balancer unavailable; using the default balancer") {
		t.Fatalf("the warning: %s", log.String())
	}
}
