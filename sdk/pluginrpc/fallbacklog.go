package pluginrpc

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/ratelog"
)

// FallbackLog returns a balancer plugin's LoadBalanceOptions.OnFallback
// and OnBack logging to log (the host's logger for the plugin, which
// names it):
//
//   - a Select that fell back to the default balancer (the plugin down or
//     answering an error) is a warning bounded as internal/ratelog bounds
//     repeated lines: the first of a burst, then each time the burst's
//     count doubles up to 1024, then one every 10 s, each after the first
//     with suppressed (left out since the line before) and in_burst (the
//     burst's count); a burst that stops is summed up 10 s after its
//     last line;
//   - the plugin answering again is one warning, at the level of the
//     warnings it ends, so that whoever saw the plugin fail at the default
//     level (warn, that of call and bench) sees it come back: fell_back,
//     how many Selects fell back since it last answered, and after, the
//     time since the first of them.
//
// It replaced a warning at most once a second whose count covered only the
// Selects since the line before, so a plugin restarted in 100 ms logged
// "selects=1" for about 1,300 fallbacks and nothing when it was back
// (tester36 F11).
//
// The warning says what happened, each its own burst: the plugin is
// unavailable (down, restarting, died during the call); its Select
// panicked; it is faulty (it picked an invoker that was not one of its
// candidates, which an in-process balancer's cluster refuses); it
// answered another error (tester73 #6: a faulty balancer was said to be
// "unavailable").
func FallbackLog(log *slog.Logger) (onFallback func(err error), onBack func(fellBack int64)) {
	lim := &ratelog.Limiter{Logger: log, SummaryAttrs: []any{"component", "pluginhost"}}
	var since atomic.Int64 // unix nanoseconds of the first fallback since the plugin last answered; 0: none
	onFallback = func(err error) {
		now := time.Now()
		since.CompareAndSwap(0, now.UnixNano())
		class := faultOf(err)
		msg := fallbackMessages[class]
		if class == "" {
			class = "unavailable"
		}
		ok, suppressed, inBurst := lim.Event(class, now, slog.LevelWarn, msg)
		if ok {
			log.Warn(msg, ratelog.Attrs([]any{"err", err}, suppressed, inBurst)...)
		}
	}
	onBack = func(n int64) {
		attrs := []any{"fell_back", n}
		if t := since.Swap(0); t != 0 {
			attrs = append(attrs, "after", time.Since(time.Unix(0, t)).Round(time.Millisecond))
		}
		log.Warn("plugin balancer answers again; the default balancer picked meanwhile", attrs...)
	}
	return onFallback, onBack
}

// fallbackMessages are FallbackLog's warnings by the fault of the
// plugin's answer (faultOf; "": it gave none).
var fallbackMessages = map[string]string{
	"":                "plugin balancer unavailable; using the default balancer",
	faultAnswered:     "plugin balancer answered an error; using the default balancer",
	faultPanic:        "plugin balancer panicked in Select; using the default balancer",
	faultNotCandidate: "plugin balancer is faulty: its Select picked an invoker that was not one of its candidates; using the default balancer",
}
