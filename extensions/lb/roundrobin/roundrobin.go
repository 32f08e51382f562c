package roundrobin

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "loadbalance".
const Name = "roundrobin"

// Builder builds round-robin balancers. The zero value is ready to use.
type Builder struct{ opts []warmup.Option }

// New returns a Builder whose balancers use opts for warm-up (clock, logger).
func New(opts ...warmup.Option) Builder { return Builder{opts: opts} }

// Name returns "roundrobin".
func (Builder) Name() string { return Name }

// Build returns a balancer for one reference. roundrobin has no keys of its
// own, so it never fails.
func (b Builder) Build(spi.URL) (spi.LoadBalance, error) {
	bl := &Balancer{w: warmup.New(b.opts...)}
	bl.methods.Store(&map[methodKey]*state{})
	return bl, nil
}

// Balancer is a smooth weighted round-robin balancer.
type Balancer struct {
	w *warmup.Weigher

	mu      sync.Mutex                           // serialises additions to methods
	methods atomic.Pointer[map[methodKey]*state] // copy-on-write
}

type methodKey struct{ service, method string }

// state is the round-robin state of one service method.
type state struct {
	mu      sync.Mutex
	round   uint64
	entries map[entryKey]*entry
}

// entryKey identifies an invoker: the invoker value itself when its type is
// comparable (pointers always are), else its URL's address and path.
type entryKey struct {
	inv  spi.Invoker
	host string
	port int
	path string
}

type entry struct {
	current int64  // nginx's current_weight
	round   uint64 // last round that saw this invoker
}

func keyOf(x spi.Invoker) entryKey {
	if reflect.TypeOf(x).Comparable() {
		return entryKey{inv: x}
	}
	u := x.URL()
	return entryKey{host: u.Host(), port: u.Port(), path: u.Path()}
}

func (b *Balancer) state(inv *spi.Invocation) *state {
	var k methodKey
	if inv != nil {
		k = methodKey{inv.Service, inv.Method}
	}
	if st := (*b.methods.Load())[k]; st != nil {
		return st
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	old := *b.methods.Load()
	if st := old[k]; st != nil {
		return st
	}
	m := make(map[methodKey]*state, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	st := &state{entries: make(map[entryKey]*entry)}
	m[k] = st
	b.methods.Store(&m)
	return st
}

// Select adds each invoker's effective weight to its current weight, picks
// the invoker with the highest current weight (the first one on a tie) and
// subtracts the total weight from it. Invokers with weight 0 are skipped;
// nil is returned when invokers is empty or every weight is 0.
func (b *Balancer) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	if len(invokers) == 0 {
		return nil
	}
	st := b.state(inv)
	now := b.w.Now()

	st.mu.Lock()
	defer st.mu.Unlock()
	st.round++
	var (
		total   int64
		live    int
		best    *entry
		bestInv spi.Invoker
	)
	for _, x := range invokers {
		k := keyOf(x)
		e := st.entries[k]
		if e == nil {
			e = &entry{}
			st.entries[k] = e
		}
		if e.round == st.round {
			continue // the same invoker twice in one list counts once
		}
		e.round = st.round
		live++
		wt := b.w.Weight(x.URL(), now)
		if wt == 0 {
			e.current = 0
			continue
		}
		e.current += wt
		total += wt
		if best == nil || e.current > best.current {
			best, bestInv = e, x
		}
	}
	if len(st.entries) > live {
		for k, e := range st.entries {
			if e.round != st.round {
				delete(st.entries, k) // the provider left
			}
		}
	}
	if best == nil {
		return nil
	}
	best.current -= total
	return bestInv
}

// Interface guards.
var (
	_ spi.LoadBalanceBuilder = Builder{}
	_ spi.LoadBalance        = (*Balancer)(nil)
)
