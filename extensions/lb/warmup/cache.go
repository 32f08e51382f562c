package warmup

import (
	"log/slog"
	"math"
	"reflect"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// Cache remembers the parsed weight keys of the last invoker list a
// balancer saw, so that a Select over an unchanged list (the directory hands
// out the same snapshot until membership changes) reads no URL: checking the
// list costs one comparison per invoker. A different list replaces the
// cached one (allocating once). It relies on an invoker's URL not changing
// during the invoker's life, which kernel/directory guarantees: a provider
// whose URL changes gets a new invoker. Lists holding an invoker whose
// dynamic type is not comparable are never cached; their weights are read
// from the URLs on every call. Safe for concurrent use.
type Cache struct {
	w   *Weigher
	cur atomic.Pointer[table]
}

// NewCache returns an empty cache computing weights with w.
func NewCache(w *Weigher) *Cache { return &Cache{w: w} }

// UseLogger passes l to the cache's Weigher (Weigher.UseLogger).
func (c *Cache) UseLogger(l *slog.Logger) { c.w.UseLogger(l) }

type table struct {
	invokers []spi.Invoker // a copy of the list
	keys     []keys
	// warmAt is when every provider of the list is warm (ms since the
	// epoch); once a View sees it pass, warm is set and weights are the
	// configured ones without reading the clock again.
	warmAt int64
	warm   atomic.Bool
	// same: every configured weight of the list is the same, so once warm
	// every effective weight is too (View.Same).
	same bool
}

func (t *table) matches(invokers []spi.Invoker) bool {
	if len(t.invokers) != len(invokers) {
		return false
	}
	for i, x := range invokers {
		// The cached types are comparable, so this never panics: values
		// are compared only when the dynamic types are the same.
		if t.invokers[i] != x {
			return false
		}
	}
	return true
}

// View returns the weights of invokers at the Weigher's current time. Once
// every provider of a cached list is warm, the clock is no longer read (a
// clock stepping back later does not make them cold again).
func (c *Cache) View(invokers []spi.Invoker) View {
	v := View{w: c.w, invokers: invokers}
	t := c.cur.Load()
	if t == nil || !t.matches(invokers) {
		if t = c.table(invokers); t == nil {
			v.now = c.w.Now()
			return v // uncacheable: read the URLs
		}
		c.cur.Store(t)
	}
	v.t = t
	if v.warm = t.warm.Load(); !v.warm {
		v.now = c.w.Now()
		if v.now >= t.warmAt {
			t.warm.Store(true)
			v.warm = true // every uptime >= its warm-up: weights are the configured ones
		}
	}
	return v
}

// table parses the keys of invokers, or returns nil when an invoker's type
// is not comparable.
func (c *Cache) table(invokers []spi.Invoker) *table {
	t := &table{invokers: make([]spi.Invoker, len(invokers)), keys: make([]keys, len(invokers))}
	for i, x := range invokers {
		if x == nil || !reflect.TypeOf(x).Comparable() {
			return nil
		}
		k := c.w.parse(x.URL())
		t.invokers[i], t.keys[i] = x, k
		t.same = i == 0 || t.same && k.weight == t.keys[0].weight
		if k.weight > 0 && k.started > 0 && k.warmup > 0 {
			at := int64(math.MaxInt64) // no overflow: saturate
			if k.warmup <= math.MaxInt64-k.started {
				at = k.started + k.warmup
			}
			t.warmAt = max(t.warmAt, at)
		}
	}
	return t
}

// View is the effective weights of one invoker list at one instant. It is a
// value, valid for the Select that made it.
type View struct {
	w        *Weigher
	now      int64  // ms since the epoch; unset when warm
	warm     bool   // every provider of t is warm
	t        *table // nil: not cached
	invokers []spi.Invoker
}

// Same reports, without computing any weight, that every invoker of the
// view is warm and has the same weight w: true only for a cached list
// whose configured weights are equal and all of whose providers are warm.
func (v View) Same() (w int64, ok bool) {
	if v.t == nil || !v.warm || !v.t.same || len(v.t.keys) == 0 {
		return 0, false
	}
	return v.t.keys[0].weight, true
}

// Weight returns the effective weight of invokers[i] (see Weigher.Weight).
func (v View) Weight(i int) int64 {
	switch {
	case v.t == nil:
		return v.w.Weight(v.invokers[i].URL(), v.now)
	case v.warm:
		return v.t.keys[i].weight
	}
	return v.w.effective(v.t.keys[i], v.now, spi.URL{}, v.invokers[i])
}
