package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/spi"
)

// registryConnected returns the samples of airnode_registry_connected in
// reg, by their registry label.
func registryConnected(t *testing.T, reg *metrics.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Prometheus().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "airnode_registry_connected" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "registry" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out
}

// Tester72 (fix-m): airnode_registry_connected{registry="zookeeper://host:port"}
// says, when scraped, whether the ZooKeeper registry has a session: 1
// once connected, 0 within a few seconds of the real ZooKeeper stopping,
// 1 again after it restarts, and no series once the registry is closed.
// Before, no metric said it.
func TestT72_RegistryConnectedGauge(t *testing.T) {
	zs, err := zktest.StartTick(200 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer zs.Close()
	r, err := zookeeper.Builder{}.Build(spi.MustParse(zs.URL("session.timeout=4s&connect.timeout=10s")))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	reg := metrics.NewRegistry()
	label := "zookeeper://" + zs.Addr()
	if got := registryConnected(t, reg); len(got) != 0 {
		t.Fatalf("before the registry's first connection: %v, want no series", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.Register(ctx, spi.MustParse("airnode://127.0.0.1:25501/t.Gauge?side=provider&timestamp=1")); err != nil {
		t.Fatal(err)
	}
	await := func(want float64, within time.Duration, what string) {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			got, ok := registryConnected(t, reg)[label]
			if ok && got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: airnode_registry_connected{registry=%q} = %v (present %v) after %v, want %v; all: %v",
					what, label, got, ok, within, want, registryConnected(t, reg))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	await(1, 10*time.Second, "registered")
	zs.Stop()
	await(0, 15*time.Second, "ZooKeeper stopped")
	if err := zs.Restart(); err != nil {
		t.Fatal(err)
	}
	await(1, 30*time.Second, "ZooKeeper restarted")
	_ = r.Close()
	if got := registryConnected(t, reg); len(got) != 0 {
		t.Fatalf("after Close: %v, want no series", got)
	}
}
