package pluginhost

import (
	"log/slog"
	"sync"
	"time"

	"github.com/airnode/airnode/sdk/pluginrpc"
)

// SlowLogInterval is the least time between two "plugin balancer is
// slow" warnings of one plugin; each says how many slow Selects there
// were since the last.
const SlowLogInterval = 10 * time.Second

// warnBypass logs a balancer plugin's bypass (pluginrpc.Bypass): one
// warning when a round trip timed out and the plugin is bypassed, naming
// the round trip (point Select or Build), the time it took and the
// bypass; one when round trips in a row answered errors (a panic in
// Select, a pick that was not a candidate) and the plugin is bypassed,
// with how many and the last error; one warning too when a probe answered again, at the level of
// the one it ends (FallbackLog's rule), so that the default level of call
// and bench (warn) shows the bypass end as it shows it begin.
func (p *proc) warnBypass(b pluginrpc.Bypass) {
	if b.Recovered {
		p.log.Warn("plugin balancer answers again; no longer bypassed")
		return
	}
	if b.Err != nil {
		p.log.Warn("plugin balancer keeps failing; the next calls use the default balancer for the bypass, then one probes the plugin again",
			"call", b.Point, "failures_in_a_row", b.Failures, "err", b.Err, "bypass", b.For)
		return
	}
	p.log.Warn("plugin balancer did not answer in time; the next calls use the default balancer for the bypass, then one probes the plugin again (the call that waited, at most half of its deadline or timeout, went on with the default balancer)",
		"call", b.Point, "took", b.Took.Round(time.Millisecond), "bound", b.Bound.Round(time.Millisecond), "bypass", b.For)
}

// slowWarner returns a balancer plugin's OnSlow: a warning at most once
// per SlowLogInterval, with the slowest Select and how many there were.
func slowWarner(log *slog.Logger) func(took, timeout time.Duration) {
	var (
		mu      sync.Mutex
		last    time.Time
		n       int
		slowest time.Duration
	)
	return func(took, timeout time.Duration) {
		mu.Lock()
		n++
		slowest = max(slowest, took)
		if !last.IsZero() && time.Since(last) < SlowLogInterval {
			mu.Unlock()
			return
		}
		count, worst := n, slowest
		n, slowest, last = 0, 0, time.Now()
		mu.Unlock()
		log.Warn("plugin balancer is slow: Select took over a tenth of the call's timeout",
			"took", took.Round(time.Millisecond), "slowest", worst.Round(time.Millisecond), "timeout", timeout, "selects", count)
	}
}
