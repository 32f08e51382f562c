package warmup_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// startedInvoker is a provider invoker whose connection says when its
// process started (spi.ProviderStart), as the kernel's does.
type startedInvoker struct {
	spi.Invoker
	started atomic.Int64
	changes *atomic.Uint64
}

func (s *startedInvoker) ProviderStarted() int64 { return s.started.Load() }
func (s *startedInvoker) StartChanges() interface{ Load() uint64 } {
	if s.changes == nil {
		return nil
	}
	return s.changes
}

func newStarted(params string, started time.Time, changes *atomic.Uint64) *startedInvoker {
	s := &startedInvoker{Invoker: spitest.NewStubInvoker(provider(params), nil), changes: changes}
	if !started.IsZero() {
		s.started.Store(started.UnixMilli())
	}
	return s
}

// A provider restarted on the address of an entry the consumer still
// lists (old timestamp): the warm-up counts from the start its connection
// gave, when later; an earlier one, or none, leaves the entry's.
func TestWeightOfCountsFromTheLaterProviderStart(t *testing.T) {
	w, _, _ := newWeigher(epoch)
	entry := "warmup=10m&timestamp=" + ms(epoch.Add(-time.Hour)) // warm by the entry
	cases := []struct {
		name    string
		params  string
		started time.Time
		want    int64
	}{
		{"restarted 1 min ago", entry, epoch.Add(-time.Minute), 10},
		{"restarted just now", entry, epoch, 1},
		{"start before the entry's", "warmup=10m&timestamp=" + ms(epoch.Add(-time.Minute)), epoch.Add(-time.Hour), 10},
		{"start unknown", entry, time.Time{}, 100},
		{"entry without timestamp stays warm", "warmup=10m", epoch.Add(-time.Minute), 100},
	}
	for _, tc := range cases {
		x := newStarted(tc.params, tc.started, nil)
		if got := w.WeightOf(x, w.Now()); got != tc.want {
			t.Errorf("%s: WeightOf %d, want %d", tc.name, got, tc.want)
		}
		if got := warmup.NewCache(w).View([]spi.Invoker{x}).Weight(0); got != tc.want {
			t.Errorf("%s: cached weight %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Scenario W3's rule holds for a start the provider gave: its clock 5 min
// ahead of the consumer's gives weight 1 and one log line naming the skew.
func TestWeightOfProviderStartAheadIsSkew(t *testing.T) {
	w, _, logs := newWeigher(epoch)
	x := newStarted("timestamp="+ms(epoch.Add(-time.Hour)), epoch.Add(5*time.Minute), nil)
	cache := warmup.NewCache(w)
	for range 100 {
		if got := cache.View([]spi.Invoker{x}).Weight(0); got != 1 {
			t.Fatalf("weight %d, want 1", got)
		}
		if got := w.WeightOf(x, w.Now()); got != 1 {
			t.Fatalf("WeightOf %d, want 1", got)
		}
	}
	if lines := logs.lines(); len(lines) != 1 || !strings.Contains(lines[0], "skew=5m0s") {
		t.Fatalf("want one line naming skew=5m0s, got %q", lines)
	}
}

// The cache reads a provider's start again once its StartChanges counter
// moved (a connection came up: maybe to a restarted process), and only
// then; a sub-list (a failover retry's) follows too.
func TestCacheReadsProviderStartAgainAfterItsCounterMoves(t *testing.T) {
	w, c, _ := newWeigher(epoch)
	var changes atomic.Uint64
	entry := "warmup=10m&timestamp=" + ms(epoch.Add(-time.Hour))
	a := newStarted(entry, epoch.Add(-time.Hour), &changes)
	b := newStarted(entry, epoch.Add(-time.Hour), &changes)
	l := []spi.Invoker{a, b}
	cache := warmup.NewCache(w)
	if got := weights(cache.View(l), 2); got != "[100 100]" {
		t.Fatalf("weights %s, want [100 100]", got)
	}
	b.started.Store(epoch.UnixMilli()) // b's process restarted: a new connection...
	if got := weights(cache.View(l), 2); got != "[100 100]" {
		t.Fatalf("weights %s before the counter moved, want the cached [100 100]", got)
	}
	changes.Add(1) // ...published after its hello
	if got := weights(cache.View(l), 2); got != "[100 1]" {
		t.Fatalf("weights %s after the counter moved, want [100 1]", got)
	}
	c.add(5 * time.Minute)
	if got := weights(cache.View(l), 2); got != "[100 50]" {
		t.Fatalf("weights 5 min later %s, want [100 50]", got)
	}
	if got := weights(cache.View(l[1:]), 1); got != "[50]" {
		t.Fatalf("weights of the retry's sub-list %s, want [50]", got)
	}
}
