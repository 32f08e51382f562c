package ratelog

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// A Limiters table gives one Limiter per base logger, with the logger and
// the table's SummaryAttrs; a new logger beyond MaxLoggers starts the
// table afresh; concurrent callers of one logger share one Limiter.
func TestWordsLimitersPerLogger(t *testing.T) {
	ls := Limiters{SummaryAttrs: []any{"component", "test"}}
	a, _ := newLogger()
	b, _ := newLogger()
	la := ls.For(a)
	if la != ls.For(a) || la == ls.For(b) {
		t.Fatal("want one Limiter per logger, a different one per logger")
	}
	if la.Logger != a || !slices.Equal(la.SummaryAttrs, []any{"component", "test"}) {
		t.Errorf("Limiter has Logger %p, SummaryAttrs %v; want %p, component=test", la.Logger, la.SummaryAttrs, a)
	}
	if n := ls.For(nil); n == nil || n != ls.For(nil) || n.Logger != nil {
		t.Error("a nil logger wants a Limiter of its own, with a nil Logger (summaries to slog.Default())")
	}
	// bursts are per logger: a's first line does not count for b
	now := time.Now()
	la.Allow("x", now)
	la.Allow("x", now) // 2: a doubling, logged
	if ok, _, n := la.Allow("x", now); ok || n != 3 {
		t.Errorf("a's third event: ok=%v n=%d, want left out, in_burst 3", ok, n)
	}
	if ok, _, n := ls.For(b).Allow("x", now); !ok || n != 1 {
		t.Errorf("b's first event: ok=%v n=%d, want logged, in_burst 1", ok, n)
	}
	// 3 loggers kept; MaxLoggers-3 more fill the table, the next starts afresh
	for range MaxLoggers - 3 {
		ls.For(slog.New(slog.DiscardHandler))
	}
	if ls.For(a) != la {
		t.Error("a full table forgot a logger before a new one came")
	}
	ls.For(slog.New(slog.DiscardHandler))
	if ls.For(a) == la {
		t.Error("a new logger beyond MaxLoggers did not start the table afresh")
	}

	c, _ := newLogger()
	got := make([]*Limiter, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i] = ls.For(c) })
	}
	wg.Wait()
	for _, l := range got {
		if l != got[0] {
			t.Fatal("concurrent For of one logger made two Limiters")
		}
	}
}
