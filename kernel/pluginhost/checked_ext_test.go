package pluginhost_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/pluginrpc"
)

// CheckPoints runs a service plugin StartPoints left out once: it becomes
// StateChecked with the protocol and the services that run's handshake
// and Describe gave, runs no process (PID 0), serves no service (the
// host never started it), and stays checked after Close (tester61 #1).
func TestCheckPointsRecordsWhatTheRunLearned(t *testing.T) {
	h := pluginhost.New([]config.Plugin{{Name: "greeter", Point: pluginhost.PointService, Command: binary("greeter")}},
		pluginhost.WithLogger(testLogger(t)))
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.StartPoints(ctx, "loadbalance", "registry", "filter"); err != nil {
		t.Fatal(err)
	}
	if unchecked := h.CheckPoints(ctx); unchecked != nil {
		t.Fatalf("CheckPoints: %v", unchecked)
	}
	i := info(t, h, "greeter")
	if i.State != pluginhost.StateChecked || i.PID != 0 || i.ProtocolVersion != pluginrpc.ProtocolVersion ||
		!slices.Equal(i.Provides, []string{"greeter.Greeter"}) || i.ProvidedPoints != nil {
		t.Fatalf("greeter after CheckPoints: %+v; want checked, no PID, protocol %d, provides [greeter.Greeter]", i, pluginrpc.ProtocolVersion)
	}
	if s := h.Services(); len(s) != 0 {
		t.Fatalf("services of a plugin only checked: %+v", s)
	}
	if s := h.CheckedServices(); len(s) != 1 || s[0].Name != "greeter.Greeter" || !slices.Equal(s[0].Methods, []string{"Hello", "Pid"}) {
		t.Fatalf("checked services: %+v, want greeter.Greeter (Hello, Pid)", s)
	}
	_ = h.Close()
	if i := info(t, h, "greeter"); i.State != pluginhost.StateChecked {
		t.Fatalf("greeter after Close: %+v", i)
	}
}
