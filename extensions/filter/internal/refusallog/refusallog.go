// Package refusallog writes the provider's rate-bounded WARN line for
// calls a limit filter (threadlimit, executelimit) refused with
// SERVER_THREADPOOL_EXHAUSTED, so that an overloaded provider says so in
// its own log, not only in its counters.
package refusallog

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/spi"
)

// Log bounds one filter's refusal lines per base logger with
// internal/ratelog, as the exchange and the kernel bound their repeated
// lines: per class (provider address, limit, service and method) the
// first refusal of a burst, then one each time the burst's count doubles
// up to 1,024, then one every 10 s, each after the first with suppressed
// (left out since the line before) and in_burst; a class whose lines were
// being left out gets a summary line 10 s after its last line. Make one
// with New; safe for concurrent use.
type Log struct {
	msg    string
	filter string // the records' component
	limits *ratelog.Limiters
}

// New returns the Log of the filter named filter ("threadlimit"), whose
// lines read "refusing calls at its limit (SERVER_THREADPOOL_EXHAUSTED)"
// with component=<filter>.
func New(filter string) *Log {
	return &Log{
		msg:    "refusing calls at its limit (SERVER_THREADPOOL_EXHAUSTED)",
		filter: filter,
		limits: &ratelog.Limiters{SummaryAttrs: []any{"component", filter}},
	}
}

// Refused logs, rate-bounded, at Warn on lg (slog.Default() when nil),
// one call, inv, refused at provider addr by the limit key=value
// (threads=1) while running calls were at it; refused is how many calls
// that limit has refused since the process started. Attributes:
// provider, consumer (inv's "remote" attachment: the consumer of the
// line's call, the first of a burst's), consumer_application when inv
// has one, limit ("threads=1"), service, method, refused, then
// suppressed and in_burst after a burst's first line.
func (l *Log) Refused(lg *slog.Logger, addr, key string, value int64, inv *spi.Invocation, refused int64) {
	service, method := inv.Service, inv.Method
	if lg == nil {
		lg = slog.Default()
	}
	if !lg.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	limit := key + "=" + strconv.FormatInt(value, 10)
	class := addr + " " + limit + " " + service + " " + method
	ok, suppressed, n := l.limits.For(lg).Event(class, time.Now(), slog.LevelWarn, l.msg)
	if !ok {
		return
	}
	// component leads the attributes rather than a lg.With: the limiter
	// is per node logger (l.limits.For(lg))
	attrs := []any{"component", l.filter, "provider", addr, "consumer", inv.Attachment(spi.AttachmentRemote)}
	if inv.ConsumerApplication != "" {
		attrs = append(attrs, "consumer_application", inv.ConsumerApplication)
	}
	attrs = append(attrs, "limit", limit, "service", service, "method", method, "refused", refused)
	lg.Warn(l.msg, ratelog.Attrs(attrs, suppressed, n)...)
}

// Calls says n calls in English for a refusal's message: "1 call",
// "4 calls".
func Calls(n int64) string {
	if n == 1 {
		return "1 call"
	}
	return strconv.FormatInt(n, 10) + " calls"
}
