package warmup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func stubs(params ...string) []spi.Invoker {
	out := make([]spi.Invoker, len(params))
	for i, p := range params {
		out[i] = spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?%s", i+1, p)), nil)
	}
	return out
}

func weights(v warmup.View, n int) string {
	out := make([]int64, n)
	for i := range out {
		out[i] = v.Weight(i)
	}
	return fmt.Sprint(out)
}

func TestCacheFollowsTheList(t *testing.T) {
	w, c, logs := newWeigher(epoch)
	cache := warmup.NewCache(w)
	ts := "timestamp=" + ms(epoch.Add(-time.Minute))
	l := stubs("weight=100&"+ts, "weight=7", "weight=0", "weight=bad&"+ts)
	if got := weights(cache.View(l), 4); got != "[10 7 0 10]" {
		t.Fatalf("weights %s", got)
	}
	// Same list later: cached keys, current time.
	c.add(4 * time.Minute)
	if got := weights(cache.View(l), 4); got != "[50 7 0 50]" {
		t.Fatalf("weights 4 min later %s", got)
	}
	// Another list (a provider replaced by a new invoker): new keys.
	l2 := append(l[:3:3], stubs("weight=40")...)
	if got := weights(cache.View(l2), 4); got != "[50 7 0 40]" {
		t.Fatalf("weights of the new list %s", got)
	}
	if got := weights(cache.View(l[:2]), 2); got != "[50 7]" {
		t.Fatalf("weights of a sub-list %s", got)
	}
	if n := len(logs.lines()); n != 1 {
		t.Fatalf("malformed weight logged %d times, want once", n)
	}
}

func TestCacheSkewWarning(t *testing.T) {
	w, _, logs := newWeigher(epoch)
	cache := warmup.NewCache(w)
	l := stubs("timestamp=" + ms(epoch.Add(5*time.Minute)))
	for range 10 {
		if got := cache.View(l).Weight(0); got != 1 {
			t.Fatalf("weight %d, want 1", got)
		}
	}
	if lines := logs.lines(); len(lines) != 1 {
		t.Fatalf("want one skew line, got %q", lines)
	}
}

// valueInvoker is not comparable: the cache must not use it as a key.
type valueInvoker struct {
	u    spi.URL
	tags []string
}

func (v valueInvoker) URL() spi.URL                                       { return v.u }
func (v valueInvoker) Invoke(context.Context, *spi.Invocation) spi.Result { return spi.Result{} }
func (v valueInvoker) Available() bool                                    { return true }
func (v valueInvoker) Stats() *spi.Stats                                  { return nil }
func (v valueInvoker) Close() error                                       { return nil }

func TestCacheNonComparableInvokers(t *testing.T) {
	w, _, _ := newWeigher(epoch)
	cache := warmup.NewCache(w)
	l := []spi.Invoker{
		valueInvoker{u: provider("weight=3")},
		valueInvoker{u: provider("weight=5"), tags: []string{"x"}},
	}
	for range 3 {
		if got := weights(cache.View(l), 2); got != "[3 5]" {
			t.Fatalf("weights %s", got)
		}
	}
	// A cached list followed by a value-type list of the same length.
	cache.View(stubs("weight=1", "weight=1"))
	if got := weights(cache.View(l), 2); got != "[3 5]" {
		t.Fatalf("weights after a cached list %s", got)
	}
}

func TestCacheViewDoesNotAllocate(t *testing.T) {
	w, _, _ := newWeigher(epoch)
	cache := warmup.NewCache(w)
	l := stubs("weight=100&warmup=10m&timestamp="+ms(epoch.Add(-time.Minute)), "", "weight=3")
	cache.View(l)
	if n := testing.AllocsPerRun(1000, func() { weights0(cache.View(l), 3) }); n != 0 {
		t.Fatalf("View allocates %v times per call", n)
	}
}

func weights0(v warmup.View, n int) (sum int64) {
	for i := range n {
		sum += v.Weight(i)
	}
	return sum
}

// Once every provider of a cached list is warm, the clock is not read again.
func TestCacheWarmListStopsReadingTheClock(t *testing.T) {
	c := &clock{t: epoch}
	var reads int
	w := warmup.New(warmup.WithClock(func() time.Time { reads++; return c.now() }))
	cache := warmup.NewCache(w)
	l := stubs("timestamp="+ms(epoch.Add(-time.Minute)), "weight=7")
	if got := weights(cache.View(l), 2); got != "[10 7]" {
		t.Fatalf("weights %s", got)
	}
	c.add(9 * time.Minute)
	if got := weights(cache.View(l), 2); got != "[100 7]" {
		t.Fatalf("weights when warm %s", got)
	}
	before := reads
	c.add(-time.Hour) // a clock stepping back does not make the list cold
	for range 10 {
		if got := weights(cache.View(l), 2); got != "[100 7]" {
			t.Fatalf("weights after warm %s", got)
		}
	}
	if reads != before {
		t.Fatalf("the clock was read %d times after the list was warm", reads-before)
	}
	// A new list is evaluated afresh.
	c.add(time.Hour)
	l2 := stubs("timestamp=" + ms(c.now().Add(-time.Minute)))
	if got := weights(cache.View(l2), 1); got != "[10]" {
		t.Fatalf("weights of a new list %s", got)
	}
}

// TestViewSame checks that View.Same holds exactly when every provider of
// a cached list is warm with one weight, and then agrees with Weight.
func TestViewSame(t *testing.T) {
	w, c, _ := newWeigher(epoch)
	cache := warmup.NewCache(w)
	warming := "timestamp=" + ms(epoch.Add(-time.Minute)) // warm after 10 min
	for _, tc := range []struct {
		name   string
		params []string
		want   bool
		weight int64
	}{
		{"default weights", []string{"", "", ""}, true, warmup.DefaultWeight},
		{"equal weights", []string{"weight=7", "weight=7"}, true, 7},
		{"all weight 0", []string{"weight=0", "weight=0"}, true, 0},
		{"one", []string{"weight=3"}, true, 3},
		{"different weights", []string{"weight=7", "weight=8"}, false, 0},
		{"one warming", []string{"", warming}, false, 0},
	} {
		l := stubs(tc.params...)
		v := cache.View(l)
		wt, ok := v.Same()
		if ok != tc.want || wt != tc.weight {
			t.Errorf("%s: Same() = %d, %v; want %d, %v", tc.name, wt, ok, tc.weight, tc.want)
		}
		for i := range l {
			if ok && v.Weight(i) != wt {
				t.Errorf("%s: Same() = %d but Weight(%d) = %d", tc.name, wt, i, v.Weight(i))
			}
		}
	}
	l := stubs("", "timestamp="+ms(epoch.Add(-time.Minute)))
	if _, ok := cache.View(l).Same(); ok {
		t.Fatal("warming list: Same")
	}
	c.add(10 * time.Minute)
	if wt, ok := cache.View(l).Same(); !ok || wt != warmup.DefaultWeight {
		t.Fatalf("once warm: Same() = %d, %v", wt, ok)
	}
	if _, ok := (warmup.View{}).Same(); ok {
		t.Fatal("zero View: Same")
	}
}
