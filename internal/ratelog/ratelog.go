// Package ratelog bounds log lines that repeat: the exchange's "channel
// closed", "stopped reading" and unsolicited-answer lines, the kernel's
// local connect failures, internal/tlsconf's handshake failures, and any
// extension's (extensions import spi and internal only). It counts as
// internal/netaccept bounds its accept failures: the first line of a
// burst of one class, then one each time the burst's count doubles up to
// Doublings, then one every Every; a line after the first carries how
// many were left out since the line before (suppressed) and how many the
// burst has had (in_burst). A class quiet for Every starts a new burst,
// whose first line carries what the previous burst left out if no summary
// told it.
//
// Summaries (Limiter.Event): once lines of a class are being left out, a
// summary line is written Every after the class's last line unless a line
// of the class was written meanwhile, so a burst that stops is summed up
// at most Every after its last line. Without them a burst of 25,254
// events in 5 s made 11 lines, the last "suppressed=511 in_burst=1024",
// and nothing told the rest until the class's next burst.
package ratelog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Bounds of a burst.
const (
	Every      = 10 * time.Second // the longest gap between two lines of a burst that goes on
	Doublings  = 1024             // the last count logged for doubling: 11 lines up to it
	MaxClasses = 64               // classes kept per Limiter; beyond, they share the class "other"
)

// burst is one class's current burst.
type burst struct {
	n          int64 // events in this burst
	suppressed int64 // events not logged since the last line
	lastLine   time.Time
	lastEvent  time.Time
	level      slog.Level  // the class's level and message, for its summary (Event)
	msg        string      //
	summary    *time.Timer // pending summary (Limiter.summarize); nil when none
}

// Limiter holds the bursts of one log's classes. The zero value is ready
// to use (its summaries, if any, go to slog.Default()); safe for
// concurrent use. Set Logger and SummaryAttrs before the first Event.
type Limiter struct {
	// Logger is where Event's summaries are written; nil: slog.Default()
	// when one is written.
	Logger *slog.Logger
	// SummaryAttrs lead each summary's attributes, e.g. "component",
	// "exchange"; the summary, class, suppressed and in_burst follow.
	SummaryAttrs []any

	mu     sync.Mutex
	bursts map[string]*burst
}

// Allow reports whether an event of class at now gets a line, and, when
// it does, how many events were left out since the class's last line and
// how many the burst has had (1 for a burst's first line). When it does
// not, suppressed is 0 and inBurst the burst's count. It writes no
// summary.
func (l *Limiter) Allow(class string, now time.Time) (ok bool, suppressed, inBurst int64) {
	return l.event(class, now, 0, "", false)
}

// Event is Allow for an event whose line would be msg at level; an event
// it leaves out also schedules the class's summary if none is pending:
// msg at level on Logger with SummaryAttrs, then "summary", class,
// suppressed (left out since the class's last line) and in_burst. The
// summary is written Every after the class's last line, on a timer (one
// per class that is leaving lines out, with no goroutine until it fires),
// unless a line of the class came meanwhile; then it waits for Every
// after that line. The summary carries the level and message of the
// class's latest event left out.
func (l *Limiter) Event(class string, now time.Time, level slog.Level, msg string) (ok bool, suppressed, inBurst int64) {
	return l.event(class, now, level, msg, true)
}

// event is Allow, and Event with summarize.
func (l *Limiter) event(class string, now time.Time, level slog.Level, msg string, summarize bool) (ok bool, suppressed, inBurst int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bursts == nil {
		l.bursts = map[string]*burst{}
	}
	b := l.bursts[class]
	if b == nil {
		if len(l.bursts) >= MaxClasses {
			class = "other"
			b = l.bursts[class]
		}
		if b == nil {
			b = &burst{}
			l.bursts[class] = b
		}
	}
	if b.n > 0 && now.Sub(b.lastEvent) >= Every {
		// quiet for Every: a new burst, whose first line says what the
		// previous one left out if no summary did
		*b = burst{suppressed: b.suppressed, summary: b.summary}
	}
	b.n++
	b.lastEvent = now
	if b.n == 1 || b.n <= Doublings && b.n&(b.n-1) == 0 || now.Sub(b.lastLine) >= Every {
		suppressed, b.suppressed, b.lastLine = b.suppressed, 0, now
		return true, suppressed, b.n
	}
	b.suppressed++
	if summarize {
		b.level, b.msg = level, msg
		if b.summary == nil {
			b.summary = time.AfterFunc(b.lastLine.Add(Every).Sub(now)+time.Millisecond, func() { l.summarize(class) })
		}
	}
	return false, 0, b.n
}

// summarize writes class's summary line if lines were left out since its
// last line and that was Every ago, or waits for that time again if a
// line came meanwhile and more were left out since. It runs on the
// summary's timer.
func (l *Limiter) summarize(class string) {
	l.mu.Lock()
	b := l.bursts[class]
	if b == nil {
		l.mu.Unlock()
		return
	}
	b.summary = nil
	ok, suppressed, n := due(b, time.Now())
	if !ok && b.suppressed > 0 {
		b.summary = time.AfterFunc(b.lastLine.Add(Every).Sub(time.Now())+time.Millisecond, func() { l.summarize(class) })
	}
	level, msg := b.level, b.msg
	l.mu.Unlock()
	if !ok {
		return
	}
	lg := l.Logger
	if lg == nil {
		lg = slog.Default()
	}
	attrs := append(append([]any(nil), l.SummaryAttrs...), "summary", "lines of this class left out since its last line",
		"class", class, "suppressed", suppressed, "in_burst", n)
	lg.Log(context.Background(), level, msg, attrs...)
}

// due reports whether b's summary is due at now (lines left out, none
// written for Every) and, if so, takes its counts as if a line had been
// written. The Limiter's mu is held.
func due(b *burst, now time.Time) (ok bool, suppressed, inBurst int64) {
	if b.suppressed == 0 || now.Sub(b.lastLine) < Every {
		return false, 0, b.n
	}
	suppressed, b.suppressed, b.lastLine = b.suppressed, 0, now
	return true, suppressed, b.n
}

// Attrs appends suppressed and in_burst to attrs when the line is not the
// first of its burst or lines were left out before it, as Allow returned
// them.
func Attrs(attrs []any, suppressed, inBurst int64) []any {
	if inBurst > 1 || suppressed > 0 {
		attrs = append(attrs, "suppressed", suppressed, "in_burst", inBurst)
	}
	return attrs
}

// Class returns a class for Allow from a message: its digit runs (ports,
// addresses, sizes, durations) blanked to '#', at most 80 bytes, so
// "read tcp 127.0.0.1:40112->127.0.0.1:9: connection reset" and the same
// from another port are one class.
func Class(msg string) string {
	return blank(msg, false)
}

// HexClass is Class with hex numbers blanked too: the hex letters right
// after a digit, and a whole hex run after "0x" (or "0X"), so "bad magic
// 0x00ff", "bad magic 0x0000" and "bad magic 0xeb3a" are one class
// ("bad magic #x#"): a peer sending random bytes made a new class of
// nearly every connection (tester34 F2).
func HexClass(msg string) string {
	return blank(msg, true)
}

// blank returns msg with its digit runs (and, with hex, the hex letters
// that follow a digit in them, and the hex run after "0x") blanked to '#',
// at most 80 bytes.
func blank(msg string, hex bool) string {
	const (
		none     = iota
		digits   // in a blanked digit run
		afterHex // just wrote the x of "0x": a hex run may follow
		hexRun   // in the blanked hex run after "0x"
	)
	var b strings.Builder
	state, zero := none, false // zero: the digit run so far is "0"
	for _, r := range msg {
		if b.Len() >= 80 {
			break
		}
		digit := r >= '0' && r <= '9'
		hexLetter := hex && (r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F')
		switch {
		case state == none && digit:
			b.WriteByte('#')
			state, zero = digits, r == '0'
			continue
		case state == afterHex && (digit || hexLetter):
			b.WriteByte('#')
			state = hexRun
			continue
		case (state == digits || state == hexRun) && (digit || hexLetter):
			zero = false
			continue
		case hex && state == digits && zero && (r == 'x' || r == 'X'):
			b.WriteRune(r)
			state, zero = afterHex, false
			continue
		}
		state, zero = none, false
		b.WriteRune(r)
	}
	return b.String()
}
