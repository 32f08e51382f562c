package exchange

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/airnode/airnode/internal/ratelog"
)

// Rate-bounded log lines: a peer that opened connections only to break the
// protocol made one Warn line each, 31,562 lines in 5 s. Lines of one
// class (a "channel closed" reason with its numbers and addresses blanked,
// an unsolicited answer, a stalled reader) are bounded by
// internal/ratelog, as internal/netaccept bounds its accept-failure lines:
// the first line of a burst verbatim, then one each time the burst's count
// doubles up to ratelog.Doublings, then one every ratelog.Every; each line
// after the first says how many were left out since the line before
// (suppressed) and how many the burst has had (in_burst). A class quiet
// for ratelog.Every starts a new burst. State is kept per base logger
// (Options.Logger, in a ratelog.Limiters table), so each node and each
// test has its own.
//
// What was left out is always reported (25,254 bad connections in 5 s
// made 11 lines, the last "suppressed=511 in_burst=1024", and nothing
// said how many followed): once lines are being left out, a summary line
// is written ratelog.Every after the class's last line unless a line of
// the class was written meanwhile (ratelog.Limiter.Event): the class's
// message with component=exchange, summary, class, suppressed (left out
// since the last line) and in_burst. So a burst that stops is summed up at
// most ratelog.Every after its last line, and one that goes on has a line
// every ratelog.Every as before. The first line of a new burst also
// carries what the previous burst left out, if no summary reported it.
var limits = ratelog.Limiters{SummaryAttrs: []any{"component", "exchange"}}

// limitsFor returns the rate-bounding state of base (nil: slog.Default()),
// whose summaries go to base with component=exchange.
func limitsFor(base *slog.Logger) *ratelog.Limiter { return limits.For(base) }

// logLimited logs msg at level on c.log unless class is over its rate
// (ratelog.Limiter.Event); a line after a burst's first, or one after
// lines were left out, carries suppressed and in_burst. A line left out
// schedules the class's summary.
func (c *Channel) logLimited(level slog.Level, class, msg string, attrs ...any) {
	if !c.log().Enabled(context.Background(), level) {
		return
	}
	ok, suppressed, n := c.limits.Event(class, time.Now(), level, msg)
	if !ok {
		return
	}
	c.log().Log(context.Background(), level, msg, ratelog.Attrs(attrs, suppressed, n)...)
}

// reasonClass returns the class of a "channel closed" reason for
// logLimited: the reason before any parenthesis, its digit runs (ids,
// sizes, addresses, durations) blanked to '#', at most 80 bytes.
// "protocol: bad magic 0x0000 (want 0xa17e)" is "protocol: bad magic #x#".
func reasonClass(reason string) string {
	if i := strings.IndexByte(reason, '('); i >= 0 {
		reason = reason[:i]
	}
	return strings.TrimSpace(ratelog.HexClass(reason))
}
