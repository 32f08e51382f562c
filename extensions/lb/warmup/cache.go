package warmup

import (
	"bytes"
	"log/slog"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/airnode/airnode/spi"
)

// Cache remembers the parsed weight keys of the last invoker list a
// balancer saw, and that list's effective weights with their prefix sums,
// so that a Select over an unchanged list (the directory hands out the
// same slice until membership or availability changes) reads no URL and
// computes no weight: recognising the list costs one memcmp of 16 bytes
// per invoker (SameList), and weights are computed again only at
// the next millisecond some provider's effective weight changes (while
// some provider warms up; never once all are warm). A different list
// replaces the cached one (allocating once). It relies on an invoker's URL
// not changing during the invoker's life, which kernel/directory
// guarantees: a provider whose URL changes gets a new invoker; an
// invoker's spi.ProviderStart is read again after its StartChanges
// counter moves (one atomic load per View for the kernel's lists). Lists
// holding an invoker whose dynamic type is not comparable are never
// cached; their weights are read from the URLs on every call. Safe for
// concurrent use.
type Cache struct {
	w   *Weigher
	cur atomic.Pointer[table] // the list most Views ask for (the directory's)
	alt atomic.Pointer[table] // the last other one (a failover retry's, without the providers tried)
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
	// configured is the weights once warm; cold the weights at an instant
	// while some provider warms up, valid until its until.
	configured *weights
	cold       atomic.Pointer[weights]
	// changes are the distinct spi.ProviderStart counters of the list's
	// invokers, at their values read before the starts were (the
	// kernel's: one, its node's): a table whose counter moved is stale,
	// its keys read again (a provider restarted on its address).
	changes []interface{ Load() uint64 }
	at      []uint64
}

// fresh reports whether no spi.ProviderStart counter of t moved since
// its keys were read.
func (t *table) fresh() bool {
	for i, c := range t.changes {
		if c.Load() != t.at[i] {
			return false
		}
	}
	return true
}

// watchStarts records the spi.ProviderStart counters of invokers and
// their values, before their starts are read (a change from then on
// leaves the table stale, never lost).
func (t *table) watchStarts(invokers []spi.Invoker) {
	for _, x := range invokers {
		p, ok := x.(spi.ProviderStart)
		if !ok {
			continue
		}
		if c := p.StartChanges(); c != nil && !slices.Contains(t.changes, c) {
			t.changes = append(t.changes, c)
			t.at = append(t.at, c.Load())
		}
	}
}

// weights is the effective weights of a list over [from, until) (ms since
// the epoch), the instants at which no provider's weight changes.
type weights struct {
	from, until int64
	w           []int64
	prefix      []int64 // prefix[i] = w[0] + ... + w[i]
	same        bool    // every w is the same
}

func newWeights(n int) *weights {
	return &weights{w: make([]int64, n), prefix: make([]int64, n), same: true}
}

// set records w[i] = wt; call it for i = 0, 1, 2... in order.
func (ws *weights) set(i int, wt int64) {
	ws.w[i] = wt
	ws.prefix[i] = wt
	if i > 0 {
		ws.prefix[i] += ws.prefix[i-1]
		ws.same = ws.same && wt == ws.w[0]
	}
}

func (ws *weights) total() int64 {
	if len(ws.prefix) == 0 {
		return 0
	}
	return ws.prefix[len(ws.prefix)-1]
}

// SameList reports whether a and b hold the same invokers in the same
// order. It first compares the two lists' memory (the interface words,
// 16 bytes an invoker: a memcmp, about 0.3 µs for 1,000 invokers, where
// comparing invoker by invoker costs about 3 µs), which equal words
// prove; only when they differ are the invokers compared one by one (two
// boxed copies of one value differ in words, not in value). A balancer
// may not keep the caller's slice (spi.LoadBalance), so it compares its
// own copy. Every invoker of a must be of a comparable type (a and b are
// compared with ==, which panics otherwise).
func SameList(a, b []spi.Invoker) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || sameWords(a, b) {
		return true
	}
	for i, x := range b {
		// The types of a are comparable, so this never panics: values
		// are compared only when the dynamic types are the same.
		if a[i] != x {
			return false
		}
	}
	return true
}

// sameWords reports whether a and b, of one length, hold the same
// interface words (type and data pointers).
func sameWords(a, b []spi.Invoker) bool {
	n := len(a) * int(unsafe.Sizeof(a[0]))
	return bytes.Equal(
		unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(a))), n),
		unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b))), n))
}

func (t *table) matches(invokers []spi.Invoker) bool { return SameList(t.invokers, invokers) }

// View returns the weights of invokers at the Weigher's current time. Once
// every provider of a cached list is warm, the clock is no longer read (a
// clock stepping back later does not make them cold again).
func (c *Cache) View(invokers []spi.Invoker) View {
	v := View{w: c.w, invokers: invokers}
	t := c.lookup(invokers)
	if t == nil {
		v.now = c.w.Now()
		return v // uncacheable: read the URLs
	}
	v.t = t
	if v.warm = t.warm.Load(); !v.warm {
		v.now = c.w.Now()
		if v.now >= t.warmAt {
			t.warm.Store(true)
			v.warm = true // every uptime >= its warm-up: weights are the configured ones
		}
	}
	if v.warm {
		v.ws = t.configured
	} else {
		v.ws = c.coldAt(t, v.now)
	}
	return v
}

// coldAt returns the weights of t at now, computing them again only when
// now is outside the instants the last ones hold for: at most once per
// millisecond (the clock's unit), and only when a provider's weight has
// changed since, so that the weights stay exactly those of the warm-up
// formula at now. (Recomputing every N ms instead would serve weights up
// to N ms stale; computing at the next change costs no more: with
// Dubbo's default weight 100 and warm-up 10 min a provider's weight
// changes every 6 s.)
func (c *Cache) coldAt(t *table, now int64) *weights {
	if ws := t.cold.Load(); ws != nil && now >= ws.from && now < ws.until {
		return ws
	}
	ws := newWeights(len(t.keys))
	ws.from, ws.until = now, math.MaxInt64
	for i, k := range t.keys {
		ws.set(i, c.w.effective(k, now, spi.URL{}, t.invokers[i]))
		ws.until = min(ws.until, nextChange(k, now))
	}
	t.cold.Store(ws)
	return ws
}

// skewRecheck is how long the weights of a list with a provider whose
// clock is ahead are kept: its skew warning (at most one per
// SkewLogInterval) is written on a computation.
const skewRecheck = 1000 // ms

// nextChange returns the first instant after now (ms since the epoch) at
// which k's effective weight may differ from its weight at now
// (math.MaxInt64: never). While warming, Effective is max(1,
// floor(uptime*weight/warmup)): the next value, q+1 (from 1, 2), is
// reached at uptime ceil((q+1)*warmup/weight), at the latest at warmup.
func nextChange(k keys, now int64) int64 {
	if k.weight == 0 || k.started == 0 || k.warmup <= 0 {
		return math.MaxInt64
	}
	uptime := now - k.started
	switch {
	case uptime >= k.warmup:
		return math.MaxInt64 // warm for good (a clock stepping back is caught by from)
	case uptime < 0:
		return now + min(-uptime, skewRecheck)
	}
	q := max(1, Effective(k.weight, k.warmup, uptime))
	var at uint64 // uptime at which q+1 is reached
	if q+1 > k.weight {
		at = uint64(k.warmup)
	} else {
		// (q+1)*warmup/weight <= warmup: hi < weight, no overflow
		hi, lo := bits.Mul64(uint64(q+1), uint64(k.warmup))
		quo, rem := bits.Div64(hi, lo, uint64(k.weight))
		if rem != 0 {
			quo++
		}
		at = min(quo, uint64(k.warmup))
	}
	if k.started > math.MaxInt64-int64(at) {
		return math.MaxInt64
	}
	return k.started + int64(at)
}

// lookup returns the table of invokers: a cached one, or a new one, nil
// when invokers cannot be cached. Two lists are kept, so that a failover
// retry's list (the directory's without the providers tried) does not
// evict the directory's: a list found in the second slot swaps places
// with the first (a new directory list takes the first slot on its
// second View), and a list a new one is a sublist of stays in the first.
// A new list that is a sublist of a cached one, in the same order (a
// retry's), takes its keys from it instead of reading its URLs.
//
// A table whose spi.ProviderStart counter moved (a connection came up,
// maybe to a restarted provider) is dropped from the cache here, and its
// list's keys read again.
func (c *Cache) lookup(invokers []spi.Invoker) *table {
	cur := c.cur.Load()
	if cur != nil && !cur.fresh() {
		c.cur.CompareAndSwap(cur, nil)
		cur = nil
	}
	alt := c.alt.Load()
	if alt != nil && !alt.fresh() {
		c.alt.CompareAndSwap(alt, nil)
		alt = nil
	}
	if cur != nil && cur.matches(invokers) {
		return cur
	}
	if alt != nil && alt.matches(invokers) {
		c.cur.Store(alt)
		if cur != nil {
			c.alt.Store(cur)
		}
		return alt
	}
	if t := c.derive(cur, invokers); t != nil {
		c.alt.Store(t)
		return t
	}
	if t := c.derive(alt, invokers); t != nil {
		c.cur.Store(alt) // the list retries are made of: keep it
		c.alt.Store(t)
		return t
	}
	t := c.table(invokers)
	switch {
	case t == nil:
	case cur == nil:
		c.cur.Store(t)
	default:
		c.alt.Store(t)
	}
	return t
}

// derive returns the table of invokers built from from's keys when
// invokers is a sublist of from's list in the same order, else nil.
func (c *Cache) derive(from *table, invokers []spi.Invoker) *table {
	if from == nil || len(invokers) > len(from.invokers) {
		return nil
	}
	t := &table{invokers: make([]spi.Invoker, len(invokers)), keys: make([]keys, len(invokers)), changes: from.changes, at: from.at}
	t.configured = newWeights(len(invokers))
	j := 0
	for i, x := range invokers {
		// from's types are comparable: == never panics.
		for j < len(from.invokers) && from.invokers[j] != x {
			j++
		}
		if j == len(from.invokers) {
			return nil
		}
		t.add(i, x, from.keys[j])
		j++
	}
	return t
}

// table parses the keys of invokers, or returns nil when an invoker's type
// is not comparable.
func (c *Cache) table(invokers []spi.Invoker) *table {
	t := &table{invokers: make([]spi.Invoker, len(invokers)), keys: make([]keys, len(invokers))}
	t.configured = newWeights(len(invokers))
	for _, x := range invokers {
		if x == nil || !reflect.TypeOf(x).Comparable() {
			return nil
		}
	}
	t.watchStarts(invokers)
	for i, x := range invokers {
		t.add(i, x, c.w.keysOf(x))
	}
	return t
}

// add records invoker i of the table's list, x, and its keys k; call it
// for i = 0, 1, 2... in order.
func (t *table) add(i int, x spi.Invoker, k keys) {
	t.invokers[i], t.keys[i] = x, k
	t.configured.set(i, k.weight)
	t.same = i == 0 || t.same && k.weight == t.keys[0].weight
	if k.weight > 0 && k.started > 0 && k.warmup > 0 {
		at := int64(math.MaxInt64) // no overflow: saturate
		if k.warmup <= math.MaxInt64-k.started {
			at = k.started + k.warmup
		}
		t.warmAt = max(t.warmAt, at)
	}
}

// View is the effective weights of one invoker list at one instant. It is a
// value, valid for the Select that made it.
type View struct {
	w        *Weigher
	now      int64    // ms since the epoch; unset when warm
	warm     bool     // every provider of t is warm
	t        *table   // nil: not cached
	ws       *weights // t's weights at now; nil when t is
	invokers []spi.Invoker
}

// Same reports, without computing any weight, that every invoker of the
// view has the same effective weight w: true for a cached list whose
// providers are all warm with equal configured weights, or whose
// effective weights at the view's instant are equal.
func (v View) Same() (w int64, ok bool) {
	if v.t == nil || len(v.t.keys) == 0 {
		return 0, false
	}
	if v.warm && v.t.same {
		return v.t.keys[0].weight, true
	}
	if v.ws.same {
		return v.ws.w[0], true
	}
	return 0, false
}

// Weight returns the effective weight of invokers[i] (see Weigher.Weight).
func (v View) Weight(i int) int64 {
	if v.ws != nil {
		return v.ws.w[i]
	}
	return v.w.WeightOf(v.invokers[i], v.now)
}

// Total returns the sum of the view's effective weights: O(1) for a cached
// list, O(n) otherwise.
func (v View) Total() int64 {
	if v.ws != nil {
		return v.ws.total()
	}
	var total int64
	for i := range v.invokers {
		total += v.Weight(i)
	}
	return total
}

// Pick returns the index of the invoker at offset off of the weights laid
// end to end: the first i whose weights w[0..i] sum past off, for off in
// [0, Total()), so that a uniform off picks i with probability
// w[i]/Total() and never an invoker of weight 0 (Dubbo's weighted random
// in O(log n): a binary search of the prefix sums for a cached list; a
// linear walk otherwise). Out of range: -1.
func (v View) Pick(off int64) int {
	if off < 0 {
		return -1
	}
	if v.ws != nil {
		p := v.ws.prefix
		lo, hi := 0, len(p) // the answer is in [lo, hi]; hi: none
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if p[m] > off {
				hi = m
			} else {
				lo = m + 1
			}
		}
		if lo == len(p) {
			return -1
		}
		return lo
	}
	for i := range v.invokers {
		if off -= v.Weight(i); off < 0 {
			return i
		}
	}
	return -1
}

// PickSkipping is Pick over the weights with invokers[skip]'s left out:
// off in [0, Total()-Weight(skip)), so that a uniform off picks i != skip
// with probability w[i]/(Total()-w[skip]) (the second of two draws
// without replacement). O(log n) for a cached list. Out of range: -1.
func (v View) PickSkipping(off int64, skip int) int {
	if off < 0 {
		return -1
	}
	if v.ws != nil {
		if off >= v.ws.prefix[skip]-v.ws.w[skip] { // at or past skip's segment
			off += v.ws.w[skip]
		}
		return v.Pick(off)
	}
	for i := range v.invokers {
		if i == skip {
			continue
		}
		if off -= v.Weight(i); off < 0 {
			return i
		}
	}
	return -1
}
