package extension_test

import (
	"fmt"
	"sync/atomic"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// countingBuilder wraps every load balancer builder to count picks.
type countingBuilder struct {
	spi.LoadBalanceBuilder
	picks *atomic.Int64
}

// Build wraps the inner balancer and keeps the optional interface it has:
// forwarding Affinity keeps consistenthash's hold of a fresh reference's
// calls until every provider is connected. (A wrapper that may see an
// spi.ContextLoadBalance, a plugin's, also implements SelectContext
// through the inner one's, the same way.)
func (b countingBuilder) Build(u spi.URL) (spi.LoadBalance, error) {
	inner, err := b.LoadBalanceBuilder.Build(u)
	if err != nil {
		return nil, err
	}
	c := &counting{inner: inner, picks: b.picks}
	if a, ok := inner.(spi.AffinityLoadBalance); ok {
		return countingAffinity{c, a}, nil
	}
	return c, nil
}

type counting struct {
	inner spi.LoadBalance
	picks *atomic.Int64
}

func (c *counting) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	c.picks.Add(1)
	return c.inner.Select(invokers, inv)
}

type countingAffinity struct {
	*counting
	a spi.AffinityLoadBalance
}

func (c countingAffinity) Affinity() bool { return c.a.Affinity() }

// A wrapper added with Point.Wrap forwards the optional interfaces of what
// it wraps (tester19 finding 9).
func ExamplePoint_Wrap() {
	c := extension.New()
	if err := bundle.Register(c); err != nil {
		panic(err)
	}
	var picks atomic.Int64
	c.LoadBalance.Wrap(func(b spi.LoadBalanceBuilder) spi.LoadBalanceBuilder {
		return countingBuilder{b, &picks}
	})
	for _, name := range []string{"consistenthash", "roundrobin"} {
		b, _ := c.LoadBalance.Get(name)
		lb, err := b.Build(spi.MustParse("airnode:///demo.Echo"))
		_, affinity := lb.(spi.AffinityLoadBalance)
		fmt.Printf("%s: affinity %v, err %v\n", name, affinity, err)
	}
	// Output:
	// consistenthash: affinity true, err <nil>
	// roundrobin: affinity false, err <nil>
}
