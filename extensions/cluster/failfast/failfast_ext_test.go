package failfast_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/extensions/cluster/failfast"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestCluster(t, failfast.Builder{}) }

func TestNoRetry(t *testing.T) {
	inactive := func(context.Context, *spi.Invocation) spi.Result {
		return spi.Result{Err: spi.Errorf(spi.StatusChannelInactive, "closed")}
	}
	ref := spi.MustParse("consumer://10.0.0.9/demo.Echo?retries=5")
	a := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.1:20880/demo.Echo"), inactive)
	b := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.2:20880/demo.Echo"), inactive)
	c, _ := failfast.Builder{}.Build(ref)
	r := c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, spitest.NewStubDirectory(ref, "memory://", a, b), pickFirst{})
	if spi.StatusOf(r.Err) != spi.StatusChannelInactive || a.Calls()+b.Calls() != 1 {
		t.Fatalf("got %v after %d calls; want CHANNEL_INACTIVE after one", r.Err, a.Calls()+b.Calls())
	}
}

type pickFirst struct{}

func (pickFirst) Select(l []spi.Invoker, _ *spi.Invocation) spi.Invoker { return l[0] }
