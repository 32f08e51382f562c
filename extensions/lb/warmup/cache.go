package warmup

import (
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

type table struct {
	invokers []spi.Invoker // a copy of the list
	keys     []keys
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

// View returns the weights of invokers at the Weigher's current time.
func (c *Cache) View(invokers []spi.Invoker) View {
	v := View{w: c.w, now: c.w.Now(), invokers: invokers}
	if t := c.cur.Load(); t != nil && t.matches(invokers) {
		v.t = t
		return v
	}
	t := &table{invokers: make([]spi.Invoker, len(invokers)), keys: make([]keys, len(invokers))}
	for i, x := range invokers {
		if x == nil || !reflect.TypeOf(x).Comparable() {
			return v // uncacheable: read the URLs
		}
		t.invokers[i] = x
		t.keys[i] = c.w.parse(x.URL())
	}
	c.cur.Store(t)
	v.t = t
	return v
}

// View is the effective weights of one invoker list at one instant. It is a
// value, valid for the Select that made it.
type View struct {
	w        *Weigher
	now      int64
	t        *table // nil: not cached
	invokers []spi.Invoker
}

// Now returns the instant of the view, ms since the epoch.
func (v View) Now() int64 { return v.now }

// Weight returns the effective weight of invokers[i] (see Weigher.Weight).
func (v View) Weight(i int) int64 {
	if v.t == nil {
		return v.w.Weight(v.invokers[i].URL(), v.now)
	}
	return v.w.effective(v.t.keys[i], v.now, spi.URL{}, v.invokers[i])
}
