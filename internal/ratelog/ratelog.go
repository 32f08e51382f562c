// Package ratelog bounds log lines that repeat, for extensions and helpers
// that cannot use the kernel's bounded lines (extensions import spi and
// internal only). It counts as the exchange's "channel closed" lines and
// internal/netaccept's accept failures do: the first line of a burst of
// one class, then one each time the burst's count doubles up to
// Doublings, then one every Every; a line after the first carries how
// many were left out since the line before (suppressed) and how many the
// burst has had (in_burst). A class quiet for Every starts a new burst,
// whose first line carries what the previous burst left out.
package ratelog

import (
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

type burst struct {
	n, suppressed       int64
	lastLine, lastEvent time.Time
}

// Limiter holds the bursts of one log's classes. The zero value is ready
// to use; safe for concurrent use.
type Limiter struct {
	mu     sync.Mutex
	bursts map[string]*burst
}

// Allow reports whether an event of class at now gets a line, and, when
// it does, how many events were left out since the class's last line and
// how many the burst has had (1 for a burst's first line).
func (l *Limiter) Allow(class string, now time.Time) (ok bool, suppressed, inBurst int64) {
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
		*b = burst{suppressed: b.suppressed}
	}
	b.n++
	b.lastEvent = now
	if b.n == 1 || b.n <= Doublings && b.n&(b.n-1) == 0 || now.Sub(b.lastLine) >= Every {
		suppressed, b.suppressed, b.lastLine = b.suppressed, 0, now
		return true, suppressed, b.n
	}
	b.suppressed++
	return false, 0, b.n
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
	var b strings.Builder
	digits := false
	for _, r := range msg {
		if b.Len() >= 80 {
			break
		}
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('#')
				digits = true
			}
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}
