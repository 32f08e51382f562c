package pluginrpc

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/airnode/airnode/internal/ratelog"
)

// LogPanic logs a panic recovered in plugin code (a filter's Invoke, a
// balancer's Select, a service method) as an error on l, bounded per
// class (the plugin's point and method: "loadbalance Select", "filter
// Invoke", a service's "acme.Calc.Boom") as internal/ratelog bounds
// airnode's other repeated lines: the first panic of a burst with its
// goroutine stack ("stack"), then one line each time the burst's count
// doubles up to 1024, then one every 10 s, each with suppressed (left out
// since the line before) and in_burst, without the stack; a burst that
// stops is summed up 10 s after its last line. A deterministic panic
// logged a full stack per call: 7 MB in 2 s (tester73 #3). Call it from
// the deferred recover, so that the stack is the panic's. Safe for
// concurrent use.
func LogPanic(l hclog.Logger, class, msg string, attrs ...any) {
	panicLogger.Store(&l)
	ok, suppressed, inBurst := panicLines.Event(class, time.Now(), slog.LevelError, msg)
	if !ok {
		return
	}
	if inBurst == 1 {
		attrs = append(attrs, "stack", string(debug.Stack()))
	}
	l.Error(msg, ratelog.Attrs(attrs, suppressed, inBurst)...)
}

var (
	// panicLines are the bursts of LogPanic's classes in this process
	// (one plugin)
	panicLines = ratelog.Limiter{Logger: slog.New(hclogHandler{}), SummaryAttrs: []any{"component", "plugin"}}
	// panicLogger is the logger of the latest LogPanic, where summaries go
	panicLogger atomic.Pointer[hclog.Logger]
)

// hclogHandler writes LogPanic's summaries to the logger of the latest
// LogPanic (hclog.L() before any).
type hclogHandler struct{ attrs []any }

func (hclogHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h hclogHandler) Handle(_ context.Context, r slog.Record) error {
	l := hclog.L()
	if p := panicLogger.Load(); p != nil {
		l = *p
	}
	args := append([]any(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		args = append(args, a.Key, a.Value.Any())
		return true
	})
	switch {
	case r.Level >= slog.LevelError:
		l.Error(r.Message, args...)
	case r.Level >= slog.LevelWarn:
		l.Warn(r.Message, args...)
	default:
		l.Info(r.Message, args...)
	}
	return nil
}

func (h hclogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := hclogHandler{attrs: append([]any(nil), h.attrs...)}
	for _, a := range as {
		n.attrs = append(n.attrs, a.Key, a.Value.Any())
	}
	return n
}

func (h hclogHandler) WithGroup(string) slog.Handler { return h }
