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
//
// What was left out is always reported (tester18 N3: 25,254 bad
// connections made 11 lines, the last "suppressed=511 in_burst=1024", and
// nothing said how many followed): once lines are being left out, a
// summary line is written logEvery after the class's last line unless a
// line of the class was written meanwhile: the class's message with
// summary, class, suppressed (left out since the last line) and in_burst.
// So a burst that stops is summed up at most logEvery after its last
// line, and one that goes on has a line every logEvery as before. The
// summary's timer (one per class that is leaving lines out, at most
// maxLogClass per logger) starts no goroutine until it fires, and writes
// at most one line then. The first line of a new burst also carries what
// the previous burst left out, if no summary reported it.
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
	level      slog.Level  // the class's level and message, for the summary
	msg        string      //
	summary    *time.Timer // pending summary (logLimits.summarize); nil when none
}

// logLimits holds the bursts of one base logger's classes.
type logLimits struct {
	mu     sync.Mutex
	bursts map[string]*logBurst
	base   *slog.Logger // the summaries' logger; nil: slog.Default() when one is written
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
	l := &logLimits{bursts: map[string]*logBurst{}, base: base}
	limitsOf[base] = l
	return l
}

// allow reports whether an event of class at now is logged, and how many
// were left out since the previous line and have happened in the burst.
func (l *logLimits) allow(class string, now time.Time) (ok bool, suppressed, inBurst int64) {
	return l.event(class, now, 0, "", false)
}

// event is allow; with summarize, a line left out schedules the class's
// summary (logLimits.summarize) of level and msg if none is pending.
func (l *logLimits) event(class string, now time.Time, level slog.Level, msg string, summarize bool) (ok bool, suppressed, inBurst int64) {
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
		// quiet for logEvery: a new burst, whose first line says what the
		// previous one left out if no summary did
		*b = logBurst{suppressed: b.suppressed, summary: b.summary}
	}
	b.n++
	b.lastEvent = now
	if b.n == 1 || b.n <= logDoublings && b.n&(b.n-1) == 0 || now.Sub(b.lastLine) >= logEvery {
		suppressed, b.suppressed, b.lastLine = b.suppressed, 0, now
		return true, suppressed, b.n
	}
	b.suppressed++
	if summarize {
		b.level, b.msg = level, msg
		if b.summary == nil {
			b.summary = time.AfterFunc(b.lastLine.Add(logEvery).Sub(now)+time.Millisecond, func() { l.summarize(class) })
		}
	}
	return false, 0, b.n
}

// summarize writes class's summary line if lines were left out since its
// last line and that was logEvery ago, or waits for that time again if a
// line came meanwhile and more were left out since. It runs on the
// summary's timer.
func (l *logLimits) summarize(class string) {
	l.mu.Lock()
	b := l.bursts[class]
	if b == nil {
		l.mu.Unlock()
		return
	}
	b.summary = nil
	ok, suppressed, n := l.due(b, time.Now())
	if !ok && b.suppressed > 0 {
		b.summary = time.AfterFunc(b.lastLine.Add(logEvery).Sub(time.Now())+time.Millisecond, func() { l.summarize(class) })
	}
	level, msg := b.level, b.msg
	l.mu.Unlock()
	if !ok {
		return
	}
	lg := l.base
	if lg == nil {
		lg = slog.Default()
	}
	lg.Log(context.Background(), level, msg, "component", "exchange", "summary", "lines of this class left out since its last line",
		"class", class, "suppressed", suppressed, "in_burst", n)
}

// due reports whether b's summary is due at now (lines left out, none
// written for logEvery) and, if so, takes its counts as if a line had
// been written. l.mu is held.
func (l *logLimits) due(b *logBurst, now time.Time) (ok bool, suppressed, inBurst int64) {
	if b.suppressed == 0 || now.Sub(b.lastLine) < logEvery {
		return false, 0, b.n
	}
	suppressed, b.suppressed, b.lastLine = b.suppressed, 0, now
	return true, suppressed, b.n
}

// logLimited logs msg at level on lg unless class is over its rate
// (logLimits.allow); a line after a burst's first, or one after lines were
// left out, carries suppressed and in_burst. A line left out schedules the
// class's summary (logLimits.summarize).
func (c *Channel) logLimited(level slog.Level, class, msg string, attrs ...any) {
	if !c.log.Enabled(context.Background(), level) {
		return
	}
	ok, suppressed, n := c.limits.event(class, time.Now(), level, msg, true)
	if !ok {
		return
	}
	if n > 1 || suppressed > 0 {
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
