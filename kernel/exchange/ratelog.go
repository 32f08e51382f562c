package exchange

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Rate-bounded log lines (tester17 finding 7): a peer that opens
// connections only to break the protocol made one Warn line each, 31,562
// lines in 5 s. Lines of one class (a "channel closed" reason with its
// numbers and addresses blanked, an unsolicited answer, a stalled reader)
// are bounded as internal/netaccept bounds its accept-failure lines: the
// first line of a burst verbatim, then one each time the burst's count
// doubles up to logDoublings, then one every logEvery; each line after the
// first says how many were left out since the line before (suppressed) and
// how many the burst has had (in_burst). A class quiet for logEvery starts
// a new burst. State is kept per base logger (Options.Logger), so each node
// and each test has its own.
const (
	logEvery     = 10 * time.Second
	logDoublings = 1024 // the last count logged for doubling: 11 lines
	maxLogClass  = 64   // classes kept per logger; beyond, they share one
	maxLogBases  = 256  // loggers kept; beyond, the table starts afresh
)

// logBurst is one class's current burst.
type logBurst struct {
	n          int64     // events in this burst
	suppressed int64     // events not logged since the last line
	lastLine   time.Time // when the last line was logged
	lastEvent  time.Time
}

// logLimits holds the bursts of one base logger's classes.
type logLimits struct {
	mu     sync.Mutex
	bursts map[string]*logBurst
}

var (
	limitsMu sync.Mutex
	limitsOf = map[*slog.Logger]*logLimits{}
)

// limitsFor returns the rate-bounding state of base (nil: slog.Default()).
func limitsFor(base *slog.Logger) *logLimits {
	limitsMu.Lock()
	defer limitsMu.Unlock()
	if l := limitsOf[base]; l != nil {
		return l
	}
	if len(limitsOf) >= maxLogBases {
		clear(limitsOf)
	}
	l := &logLimits{bursts: map[string]*logBurst{}}
	limitsOf[base] = l
	return l
}

// allow reports whether an event of class at now is logged, and how many
// were left out since the previous line and have happened in the burst.
func (l *logLimits) allow(class string, now time.Time) (ok bool, suppressed, inBurst int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bursts[class]
	if b == nil {
		if len(l.bursts) >= maxLogClass {
			class = "other"
			b = l.bursts[class]
		}
		if b == nil {
			b = &logBurst{}
			l.bursts[class] = b
		}
	}
	if b.n > 0 && now.Sub(b.lastEvent) >= logEvery {
		*b = logBurst{} // quiet for logEvery: a new burst
	}
	b.n++
	b.lastEvent = now
	if b.n == 1 || b.n <= logDoublings && b.n&(b.n-1) == 0 || now.Sub(b.lastLine) >= logEvery {
		suppressed, b.suppressed, b.lastLine = b.suppressed, 0, now
		return true, suppressed, b.n
	}
	b.suppressed++
	return false, 0, b.n
}

// logLimited logs msg at level on lg unless class is over its rate
// (logLimits.allow); a line after a burst's first carries suppressed and
// in_burst.
func (c *Channel) logLimited(level slog.Level, class, msg string, attrs ...any) {
	if !c.log.Enabled(context.Background(), level) {
		return
	}
	ok, suppressed, n := c.limits.allow(class, time.Now())
	if !ok {
		return
	}
	if n > 1 {
		attrs = append(attrs, "suppressed", suppressed, "in_burst", n)
	}
	c.log.Log(context.Background(), level, msg, attrs...)
}

// reasonClass returns the class of a "channel closed" reason for
// logLimited: the reason before any parenthesis, its digit runs (ids,
// sizes, addresses, durations) blanked to '#', at most 80 bytes.
// "protocol: bad magic 0x0000 (want 0xa17e)" is "protocol: bad magic #x#".
func reasonClass(reason string) string {
	if i := strings.IndexByte(reason, '('); i >= 0 {
		reason = reason[:i]
	}
	var b strings.Builder
	digits := false
	for _, r := range reason {
		if b.Len() >= 80 {
			break
		}
		if r >= '0' && r <= '9' || digits && (r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			if !digits {
				b.WriteByte('#')
				digits = true
			}
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}
