package ratelog

import (
	"log/slog"
	"sync"
)

// MaxLoggers is the most base loggers a Limiters keeps; at the next new
// one it starts afresh, so a program that makes loggers without end (one
// per test, per node) does not keep them all.
const MaxLoggers = 256

// Limiters keeps one Limiter per base logger, so each node and each test,
// which have their own loggers, have their own bursts: the exchange's
// lines and the kernel's local connect failures each keep one table. The
// zero value is ready to use; set SummaryAttrs before the first For. Safe
// for concurrent use.
type Limiters struct {
	// SummaryAttrs are each new Limiter's SummaryAttrs, e.g. "component",
	// "exchange".
	SummaryAttrs []any

	mu sync.Mutex
	of map[*slog.Logger]*Limiter
}

// For returns base's Limiter (a nil base is a logger of its own: its
// Limiter's summaries go to slog.Default()), making it on first use with
// Logger base and the table's SummaryAttrs. After MaxLoggers loggers the
// table starts afresh: a logger seen again then gets a new Limiter, its
// bursts counted anew.
func (ls *Limiters) For(base *slog.Logger) *Limiter {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.of[base]; l != nil {
		return l
	}
	if ls.of == nil || len(ls.of) >= MaxLoggers {
		ls.of = map[*slog.Logger]*Limiter{}
	}
	l := &Limiter{Logger: base, SummaryAttrs: ls.SummaryAttrs}
	ls.of[base] = l
	return l
}
