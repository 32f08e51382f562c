package warmup_test

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
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
