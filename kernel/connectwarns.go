package kernel

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Bounds of a reference's "cannot connect to provider" lines
// (connectWarns).
const (
	// connectWarnsNamed is how many providers of a reference have their
	// first-connection failures logged at Warn, as every provider's were.
	connectWarnsNamed = 3
	// connectWarnsWait is how long after the first line left out the
	// summary is written: the providers of a direct list or a registry's
	// answer fail their first connections within a backoff's jitter of
	// one another, so one summary counts them all.
	connectWarnsWait = time.Second
	// connectWarnsEvery is the shortest gap between two summaries of a
	// reference: the later attempts' lines (8, 16, ...) spread over
	// seconds as their backoffs' jitter adds up.
	connectWarnsEvery = 10 * time.Second
)

// connectWarns bounds, per reference, the Warn lines of providers whose
// first connection keeps failing ("kernel: cannot connect to provider",
// conn.run's attempts 4, 8, 16...): the first connectWarnsNamed providers
// to fail are logged as before, at each of those attempts; the others'
// lines go to Debug and are counted, and one summary says how many were
// left out ("... and 993 more providers could not be connected"),
// connectWarnsWait after the first of them, at most once every
// connectWarnsEvery, and at the reference's close. A direct list of 4 live
// and 996 dead addresses made 996 Warn lines (tester99 #4); it makes 4.
// State changes (a provider connected at last, a channel closed, a
// reconnection) are not bounded. A conn shared by several references
// (the node's pool) counts against the one that made it. A nil
// *connectWarns bounds nothing. Safe for concurrent use.
type connectWarns struct {
	logger  *slog.Logger // the reference's component=kernel logger
	service string       // the reference's service key, on the summary

	mu      sync.Mutex
	named   map[string]struct{} // the providers whose lines are logged
	left    map[string]struct{} // the providers left out since the last summary
	example string              // one of left
	timer   *time.Timer         // the pending summary; nil: none
	last    time.Time           // the last summary
	closed  bool                // close ran: every line is logged
}

func newConnectWarns(logger *slog.Logger, service string) *connectWarns {
	return &connectWarns{logger: logger, service: service}
}

// allow reports whether the failed first connection to addr is logged at
// Warn; when it is not, it is counted for the summary, scheduled if none
// is pending.
func (w *connectWarns) allow(addr string) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return true
	}
	if _, ok := w.named[addr]; ok {
		return true
	}
	if len(w.named) < connectWarnsNamed {
		if w.named == nil {
			w.named = map[string]struct{}{}
		}
		w.named[addr] = struct{}{}
		return true
	}
	if w.left == nil {
		w.left = map[string]struct{}{}
	}
	if len(w.left) == 0 {
		w.example = addr
	}
	w.left[addr] = struct{}{}
	if w.timer == nil {
		now := time.Now()
		at := now.Add(connectWarnsWait)
		if !w.last.IsZero() && w.last.Add(connectWarnsEvery).After(at) {
			at = w.last.Add(connectWarnsEvery)
		}
		w.timer = time.AfterFunc(at.Sub(now), w.summarize)
	}
	return false
}

// summarize writes the summary of the providers left out since the last
// one, if any. It runs on the summary's timer, and in close.
func (w *connectWarns) summarize() {
	w.mu.Lock()
	n, example := len(w.left), w.example
	clear(w.left)
	w.timer = nil
	if n > 0 {
		w.last = time.Now()
	}
	w.mu.Unlock()
	if n == 0 {
		return
	}
	w.logger.Warn(fmt.Sprintf("... and %d more providers could not be connected (their lines left out): see airnode stats or the metrics (airnode_consumer_connect_failures_total)", n),
		"service", w.service, "more_providers", n, "example", example, "logged_providers", connectWarnsNamed)
}

// close writes the pending summary at once and stops bounding: lines of
// the conns that outlive the reference (another reference shares them)
// are logged as before. Idempotent.
func (w *connectWarns) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.closed = true
	if w.timer != nil {
		w.timer.Stop() // if it fired already, its summarize finds nothing left
	}
	w.mu.Unlock()
	w.summarize()
}
