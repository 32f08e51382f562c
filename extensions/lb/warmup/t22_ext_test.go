package warmup_test

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// TestT22_CachedWeightsExact: the weights a Cache serves while providers
// warm up (computed again only at the next millisecond one changes,
// tester22 finding 6) are at every instant exactly the warm-up formula's
// (Weigher.Weight), and Total/Pick agree with them: stepping a clock
// through warm-up periods of every shape (weights 1 to 2^31-1, warm-ups
// of 1 ms to 10 min, a provider whose clock is ahead, weight 0).
func TestT22_CachedWeightsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 6))
	c := &clock{t: epoch}
	w := warmup.New(warmup.WithClock(c.now), warmup.WithLogger(quietLogger()))
	cache := warmup.NewCache(w)
	start := epoch.UnixMilli()
	var params []string
	for _, p := range []string{
		"weight=100&warmup=600000", "weight=1&warmup=1000", "weight=2&warmup=3", "weight=2147483647&warmup=1",
		"weight=7&warmup=100", "weight=0&warmup=100", "weight=100&warmup=0", "weight=100",
	} {
		params = append(params, fmt.Sprintf("%s&timestamp=%d", p, start))
	}
	params = append(params, fmt.Sprintf("weight=50&warmup=2000&timestamp=%d", start+1500)) // clock 1.5 s ahead
	for range 6 {
		params = append(params, fmt.Sprintf("weight=%d&warmup=%d&timestamp=%d", 1+rng.IntN(1000), 1+rng.IntN(5000), start-int64(rng.IntN(3000))))
	}
	l := stubs(params...)
	check := func(at string) {
		t.Helper()
		now := w.Now()
		v := cache.View(l)
		var total int64
		for i, x := range l {
			want := w.Weight(x.URL(), now)
			if got := v.Weight(i); got != want {
				t.Fatalf("%s, provider %d (%s): cached weight %d, formula %d", at, i, x.URL().String(), got, want)
			}
			total += want
		}
		if v.Total() != total {
			t.Fatalf("%s: Total %d, sum of weights %d", at, v.Total(), total)
		}
		// Pick maps each offset to the provider whose segment holds it.
		var end int64
		for i := range l {
			if wt := v.Weight(i); wt > 0 {
				if got := v.Pick(end); got != i {
					t.Fatalf("%s: Pick(%d) = %d, want %d", at, end, got, i)
				}
				end += wt
				if got := v.Pick(end - 1); got != i {
					t.Fatalf("%s: Pick(%d) = %d, want %d", at, end-1, got, i)
				}
			}
		}
		if v.Pick(total) != -1 || v.Pick(-1) != -1 {
			t.Fatalf("%s: Pick out of range not -1", at)
		}
	}
	for ms := range 6000 { // every millisecond of the first 6 s
		check(fmt.Sprintf("t+%dms", ms))
		c.add(time.Millisecond)
	}
	for range 400 { // then random steps, back in time too
		c.add(time.Duration(rng.IntN(4000)-1000) * time.Millisecond)
		check(c.now().Sub(epoch).String())
	}
}

// quietLogger drops the skew warnings.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestT22_RetryListsKeepTheirWeights: a failover retry's list (the
// directory's without the providers tried) is weighed from the cached
// list's keys, and does not evict it; lists that are not sublists in
// order (reversed, with a newcomer) are read from their URLs. Every
// weight is the formula's.
func TestT22_RetryListsKeepTheirWeights(t *testing.T) {
	c := &clock{t: epoch}
	w := warmup.New(warmup.WithClock(c.now), warmup.WithLogger(quietLogger()))
	cache := warmup.NewCache(w)
	start := epoch.Add(-time.Minute).UnixMilli()
	var params []string
	for i := range 12 {
		params = append(params, fmt.Sprintf("weight=%d&warmup=%d&timestamp=%d", 10*(i+1), 60000+10000*i, start))
	}
	l := stubs(params...)
	newcomer := stubs("weight=77")
	check := func(name string, list []spi.Invoker) {
		t.Helper()
		v := cache.View(list)
		for i, x := range list {
			if got, want := v.Weight(i), w.Weight(x.URL(), w.Now()); got != want {
				t.Fatalf("%s, provider %d: weight %d, formula %d", name, i, got, want)
			}
		}
	}
	for round := range 30 {
		check("the list", l)
		tried := round % len(l)
		retry := append(append([]spi.Invoker{}, l[:tried]...), l[tried+1:]...)
		check("a retry's list", retry)
		if round%5 == 0 {
			check("every other provider", []spi.Invoker{l[0], l[2], l[4], l[6]})
			check("reversed", []spi.Invoker{l[3], l[2], l[1]})
			check("with a newcomer", append(append([]spi.Invoker{}, l[:3]...), newcomer[0]))
		}
		c.add(1700 * time.Millisecond)
	}
}
