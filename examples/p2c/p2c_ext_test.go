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
