package cluster_test

import (
	"context"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/cluster/failfast"
	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/extensions/cluster/failsafe"
	"github.com/airnode/airnode/extensions/cluster/forking"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// nilLB picks nothing, as a buggy third-party balancer does; named gives
// it a Name() as plugin balancers have.
type nilLB struct{}

func (nilLB) Select([]spi.Invoker, *spi.Invocation) spi.Invoker { return nil }

type namedNilLB struct{ nilLB }

func (namedNilLB) Name() string { return "acme.p2c" }

// slowLB is a spi.ContextLoadBalance that could not pick in time.
type slowLB struct{ nilLB }

func (slowLB) SelectContext(context.Context, []spi.Invoker, *spi.Invocation) (spi.Invoker, error) {
	return nil, spi.Errorf(spi.StatusClientTimeout, "pluginrpc: balancer \"acme.p2c\": Select gave no answer within the call's timeout 50ms")
}

func clusters(t *testing.T) map[string]spi.Cluster {
	t.Helper()
	out := map[string]spi.Cluster{}
	for _, b := range []spi.ClusterBuilder{failover.Builder{}, failfast.Builder{}, failsafe.New(), forking.Builder{}} {
		c, err := b.Build(spi.MustParse("consumer://h/demo.Echo"))
		if err != nil {
			t.Fatal(err)
		}
		out[b.Name()] = c
	}
	return out
}

func directory(query string, called *int) spi.Directory {
	var invs []spi.Invoker
	for _, a := range []string{"10.0.0.1:20880", "10.0.0.2:20880"} {
		invs = append(invs, spitest.NewStubInvoker(spi.MustParse("airnode://"+a+"/demo.Echo?"+query), func(context.Context, *spi.Invocation) spi.Result {
			*called++
			return spi.Result{Value: "x"}
		}))
	}
	return spitest.NewStubDirectory(spi.MustParse("consumer://h/demo.Echo?loadbalance=acme.other"), "memory://", invs...)
}

// A balancer returning nil while the providers have weights is named as
// the culprit ("balancer acme.p2c returned no provider out of 2"); only
// when every weight is 0 does the message blame the weights.
func TestNilPickNamesTheBalancer(t *testing.T) {
	for name, c := range clusters(t) {
		for _, tc := range []struct {
			lb    spi.LoadBalance
			query string
			want  string
		}{
			{namedNilLB{}, "weight=100", "balancer acme.p2c returned no provider out of 2"},
			{nilLB{}, "", "balancer acme.other returned no provider out of 2"}, // the URL's loadbalance key
			{namedNilLB{}, "weight=0", "all 2 providers have weight 0"},
		} {
			called := 0
			res := c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, directory(tc.query, &called), tc.lb)
			e, ok := res.Err.(*spi.Error)
			if !ok || e.Status != spi.StatusServiceNotFound || !strings.HasSuffix(e.Message, ": "+tc.want) || called != 0 {
				t.Errorf("%s, weight %q: got %v (called %d); want SERVICE_NOT_FOUND ending %q", name, tc.query, res.Err, called, tc.want)
			}
		}
	}
}

// A balancer that could not pick in time fails the call with its own
// error; no provider is called, and failover does not retry it.
func TestContextBalancerErrorIsTheCallsResult(t *testing.T) {
	for name, c := range clusters(t) {
		called := 0
		res := c.Invoke(context.Background(), &spi.Invocation{Service: "demo.Echo", Method: "Echo"}, directory("", &called), slowLB{})
		e, ok := res.Err.(*spi.Error)
		if !ok || e.Status != spi.StatusClientTimeout || !strings.Contains(e.Message, `balancer "acme.p2c"`) || called != 0 {
			t.Errorf("%s: got %v (called %d); want the balancer's CLIENT_TIMEOUT", name, res.Err, called)
		}
	}
}
