package p2c_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/examples/p2c"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestConformance runs the bundled balancers' suite in process, through the
// plugin's gRPC adaptation.
func TestConformance(t *testing.T) { sdktest.TestLoadBalance(t, p2c.Builder{}) }

func TestPicksLessActive(t *testing.T) {
	busy := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/demo.Echo"), nil)
	idle := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.2:1/demo.Echo"), nil)
	for range 5 {
		busy.Stats().Begin()
	}
	lb, _ := p2c.Builder{}.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	for range 100 {
		if got := lb.Select([]spi.Invoker{busy, idle}, &spi.Invocation{}); got != idle {
			t.Fatalf("picked %s, want the idle provider", got.URL())
		}
	}
}

// p2c declares the one key it reads, weight, as the kernel reads it; the
// declaration reaches the host side through the plugin protocol.
func TestDeclaresWeight(t *testing.T) {
	keys := p2c.Builder{}.Keys()
	if err := spi.ValidateKeys(keys); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].Key != "weight" || keys[0].Type != spi.KeyTypeInt || keys[0].Default != "100" {
		t.Fatalf("keys %+v, want weight, int, default 100", keys)
	}
	host, ok := sdktest.LoadBalance(t, p2c.Builder{}).(spi.KeyDescriber)
	if !ok || len(host.Keys()) != 1 || host.Keys()[0].Key != "weight" {
		t.Fatalf("host-side builder keys: %v", ok)
	}
}
