// Package p2c is an example third-party load balancer served as an airnode
// plugin: power of two choices (Mitzenmacher, "The Power of Two Choices in
// Randomized Load Balancing", 2001; the policy of nginx's random two and
// Finagle's P2C). Each Select draws two distinct providers at random and
// picks the one with fewer calls in flight, ties going to the lower mean
// response time.
//
// Registered name: whatever plugins.yaml calls it (the binary calls itself
// "p2c"). URL keys read from each provider URL:
//
//	key     type  unit  default  bounds
//	weight  int   -     100      ≤ 0 excludes the provider
//
// Safe for concurrent use; Select does not allocate.
package p2c

import (
	"math/rand/v2"

	"github.com/airnode/airnode/spi"
)

// Name is the balancer's own name.
const Name = "p2c"

// Builder builds p2c balancers. The zero value is ready.
type Builder struct{}

// Name returns "p2c".
func (Builder) Name() string { return Name }

// Build accepts any reference URL: p2c has no keys of its own.
func (Builder) Build(spi.URL) (spi.LoadBalance, error) { return Balancer{}, nil }

// Balancer is a p2c balancer.
type Balancer struct{}

func eligible(iv spi.Invoker) bool {
	w, err := iv.URL().Int("weight", 100)
	return err == nil && w > 0
}

// Select returns the less loaded of two random eligible invokers, the only
// eligible one, or nil when every weight is 0.
func (Balancer) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	n := 0
	for _, iv := range invokers {
		if eligible(iv) {
			n++
		}
	}
	switch n {
	case 0:
		return nil
	case 1:
		for _, iv := range invokers {
			if eligible(iv) {
				return iv
			}
		}
	}
	i := rand.IntN(n)
	j := rand.IntN(n - 1)
	if j >= i {
		j++
	}
	a, b := nth(invokers, i), nth(invokers, j)
	return less(a, b)
}

// nth returns the k-th eligible invoker.
func nth(invokers []spi.Invoker, k int) spi.Invoker {
	for _, iv := range invokers {
		if eligible(iv) {
			if k == 0 {
				return iv
			}
			k--
		}
	}
	return nil
}

func less(a, b spi.Invoker) spi.Invoker {
	sa, sb := a.Stats(), b.Stats()
	if sa == nil || sb == nil {
		return a
	}
	if aa, ab := sa.Active(), sb.Active(); aa != ab {
		if aa < ab {
			return a
		}
		return b
	}
	ma, _ := sa.MeanResponse()
	mb, _ := sb.MeanResponse()
	if mb < ma {
		return b
	}
	return a
}

var (
	_ spi.LoadBalanceBuilder = Builder{}
	_ spi.LoadBalance        = Balancer{}
)
