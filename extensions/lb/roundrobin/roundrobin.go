package roundrobin

import (
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

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
	w := warmup.New(b.opts...)
	bl := &Balancer{w: w, c: warmup.NewCache(w)}
	bl.methods.Store(&map[methodKey]*state{})
	return bl, nil
}

// Balancer is a smooth weighted round-robin balancer.
type Balancer struct {
	w *warmup.Weigher
	c *warmup.Cache

	mu      sync.Mutex                           // serialises additions to methods
	methods atomic.Pointer[map[methodKey]*state] // copy-on-write
}

type methodKey struct{ service, method string }

// state is the round-robin state of one service method.
type state struct {
	next    atomic.Uint64 // picks made while every weight was the same
	mu      sync.Mutex
	round   uint64
	entries map[entryKey]*entry // every invoker of the last list
	// list and ents are the last list and its entries, aligned, so that an
	// unchanged list needs no map lookup; list is nil when the last list
	// held an invoker whose type is not comparable.
	list []spi.Invoker
	ents []*entry
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
	round   uint64 // last round that counted this invoker
	goneAt  int64  // when it left the list, ms since the epoch; 0 while listed
}

// RecycleAfter is how long the state of a provider that is no longer
// listed is kept (Dubbo's RECYCLE_PERIOD): a failover retry over the
// providers not yet tried, or a provider that comes back soon, keeps its
// place in the rotation.
const RecycleAfter = time.Minute

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

// align returns the entries of invokers, in order. A list that differs from
// the last one is looked up in the entries map and new invokers get fresh
// entries (allocating once per change); entries of invokers not listed for
// RecycleAfter are dropped then. The clock is read only on a change.
func (st *state) align(invokers []spi.Invoker, w *warmup.Weigher) []*entry {
	if st.list != nil && warmup.SameList(st.list, invokers) {
		return st.ents
	}
	ents := make([]*entry, len(invokers))
	next := make(map[entryKey]*entry, len(invokers))
	comparable := true
	for i, x := range invokers {
		var k entryKey
		if reflect.TypeOf(x).Comparable() {
			k.inv = x
		} else {
			comparable = false
			u := x.URL()
			k = entryKey{host: u.Host(), port: u.Port(), path: u.Path()}
		}
		e := next[k]
		if e == nil {
			if e = st.entries[k]; e == nil {
				e = &entry{}
			}
			next[k] = e
		}
		e.goneAt = 0
		ents[i] = e
	}
	now := w.Now()
	for k, e := range st.entries {
		if _, listed := next[k]; listed {
			continue
		}
		if e.goneAt == 0 {
			e.goneAt = now
		}
		if now-e.goneAt < RecycleAfter.Milliseconds() {
			next[k] = e
		}
	}
	st.entries, st.ents, st.list = next, ents, nil
	if comparable {
		st.list = slices.Clone(invokers)
	}
	return ents
}

// Select adds each invoker's effective weight to its current weight, picks
// the invoker with the highest current weight (the first one on a tie) and
// subtracts the total weight from it. Invokers with weight 0 are skipped;
// nil is returned when invokers is empty or every weight is 0.
//
// A weight that changes (a provider warming up) keeps its current weight,
// as nginx does with effective weights; Dubbo resets it to 0, which breaks
// the smooth order on every change during warm-up.
func (b *Balancer) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	if len(invokers) == 0 {
		return nil
	}
	st := b.state(inv)
	v := b.c.View(invokers)
	if wt, ok := v.Same(); ok {
		// Every weight equal: the smooth order is the list's order
		// (from equal current weights, each pick takes the next one),
		// which a counter gives in O(1), with no lock and no provider's
		// current weight to add to. The current weights stay as they
		// are (their sum stays 0) for when the weights differ again.
		if wt == 0 {
			return nil
		}
		return invokers[(st.next.Add(1)-1)%uint64(len(invokers))]
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	ents := st.align(invokers, b.w)
	st.round++
	var (
		total   int64
		best    *entry
		bestInv spi.Invoker
	)
	for i, x := range invokers {
		e := ents[i]
		if e.round == st.round {
			continue // the same invoker twice in one list counts once
		}
		e.round = st.round
		wt := v.Weight(i)
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
	if best == nil {
		return nil
	}
	best.current -= total
	return bestInv
}

// Interface guards.
// UseLogger makes the balancer's warnings (malformed weight or warm-up
// values, a provider's clock ahead) go to l, its node's logger
// (spi.LoggerUser: the kernel calls it right after Build).
func (b *Balancer) UseLogger(l *slog.Logger) { b.w.UseLogger(l) }

var (
	_ spi.LoadBalanceBuilder = Builder{}
	_ spi.LoadBalance        = (*Balancer)(nil)
	_ spi.LoggerUser         = (*Balancer)(nil)
)
