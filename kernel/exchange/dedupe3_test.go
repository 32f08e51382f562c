package exchange

import (
	"log/slog"
	"slices"
	"testing"
)

// The exchange's lines are bounded by one internal/ratelog.Limiter per
// base logger, whose summaries go to that logger with component=exchange.
func TestDedupe3_LimiterPerBaseLogger(t *testing.T) {
	base := slog.New(&logSink{})
	l := limitsFor(base)
	if l != limitsFor(base) {
		t.Error("two limiters for one base logger")
	}
	if l == limitsFor(slog.New(&logSink{})) {
		t.Error("one limiter for two base loggers")
	}
	if l.Logger != base || !slices.Equal(l.SummaryAttrs, []any{"component", "exchange"}) {
		t.Errorf("summaries go to %p with %v, want %p with component=exchange", l.Logger, l.SummaryAttrs, base)
	}
}
