package kernel

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Outlier ejection: a consumer stops picking a provider whose calls keep
// failing in a way that says the provider (or the path to it) is unwell,
// for a while, then tries it again. It is passive health checking as
// Envoy's outlier detection (consecutive_5xx, base_ejection_time,
// max_ejection_percent) and gRPC's outlier_detection policy (gRFC A50) do
// it; Dubbo has none. It covers what the heartbeat cannot see: a provider
// that still answers pings while its calls time out (a lossy or
// congested link, a process stuck in its handlers), which with the
// default random balancer holds every caller.
//
// A provider whose connection's liveness check waits for its ping's
// answer (its calls timed out, or waited, with nothing read) is left out
// the same way, under the same rules, until the check ends (checkHolds):
// the check begins at the first silent timeout, before a streak of
// outlier.consecutive can form when fewer callers than that were waiting
// on it.
//
// The URL keys, read from each provider's merged URL (a provider may
// publish its consumers' default):
//
//	key                   type      default  bounds
//	outlier.consecutive   int       5        >= 0; 0: no ejection
//	outlier.ejection      duration  5s       > 0, at most 5m
//	outlier.max.percent   int       50       0..100
const (
	keyOutlierConsecutive = "outlier.consecutive"
	keyOutlierEjection    = "outlier.ejection"
	keyOutlierMaxPercent  = "outlier.max.percent"
)

// DefaultOutlierConsecutive is how many counted failures in a row
// ("outlier.consecutive") eject a provider: Envoy's consecutive_5xx
// default.
const DefaultOutlierConsecutive = 5

// DefaultOutlierEjection is how long a provider's first ejection lasts
// ("outlier.ejection"); each one that follows soon after lasts twice the
// one before, up to MaxOutlierEjection.
const DefaultOutlierEjection = 5 * time.Second

// MaxOutlierEjection caps an ejection's length, and bounds
// outlier.ejection: Envoy's max_ejection_time default.
const MaxOutlierEjection = 5 * time.Minute

// DefaultOutlierMaxPercent is the largest share of a reference's
// providers, in percent, that may be ejected at once
// ("outlier.max.percent"): with two or three providers one, with one none.
const DefaultOutlierMaxPercent = 50

// outlierConf is one provider invoker's outlier keys.
type outlierConf struct {
	consecutive int64         // 0: off
	ejection    time.Duration // first ejection
	maxPercent  int64
}

// readOutlierSettings reads and checks outlier.consecutive,
// outlier.ejection and outlier.max.percent.
func readOutlierSettings(u spi.URL) (outlierConf, error) {
	var c outlierConf
	var err error
	if c.consecutive, err = u.Int(keyOutlierConsecutive, DefaultOutlierConsecutive); err != nil {
		return c, err
	}
	if c.consecutive < 0 {
		return c, &spi.ParamError{Key: keyOutlierConsecutive, Value: fmt.Sprint(c.consecutive), Want: "failures in a row that eject a provider, >= 1, or 0 for no ejection"}
	}
	if c.ejection, err = u.Duration(keyOutlierEjection, DefaultOutlierEjection); err != nil {
		return c, err
	}
	if c.ejection <= 0 || c.ejection > MaxOutlierEjection {
		v, _ := u.Param(keyOutlierEjection)
		return c, &spi.ParamError{Key: keyOutlierEjection, Value: v, Want: fmt.Sprintf("a duration more than 0 and at most %v such as 5s (the first ejection; later ones double, up to %v)", MaxOutlierEjection, MaxOutlierEjection)}
	}
	if c.maxPercent, err = u.MethodIntIn("", keyOutlierMaxPercent, DefaultOutlierMaxPercent, 0, 100, ""); err != nil {
		return c, err
	}
	return c, nil
}

// outlierGroup is the set of provider invokers of one reference, which
// outlier.max.percent and the last-available-provider rule are counted
// over. Its lock is taken only to eject (a rare path), never per call.
type outlierGroup struct {
	mu      sync.Mutex
	members []*remoteInvoker
}

func (g *outlierGroup) add(r *remoteInvoker) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.members = append(g.members, r)
	g.mu.Unlock()
}

func (g *outlierGroup) remove(r *remoteInvoker) {
	if g == nil {
		return
	}
	g.mu.Lock()
	for i, m := range g.members {
		if m == r {
			g.members = append(g.members[:i:i], g.members[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
}

// outlierState is one provider invoker's failure streak and ejection.
// The per-call cost, on success, is one atomic load (observe); Available
// loads one atomic bool, and the clock only while the provider is
// ejected.
type outlierState struct {
	conf    outlierConf
	group   *outlierGroup // nil: the provider is alone, never ejected
	log     *slog.Logger
	streak  atomic.Int64 // counted failures in a row
	ejected atomic.Bool
	until   atomic.Int64 // end of the ejection, as spi.Mono() in ns

	mu       sync.Mutex
	statuses []spi.Status // the streak's statuses, the first maxStreakShown
	lastErr  string       // the streak's last error message
	level    int          // ejections in a row, each doubling the next one's length
	length   time.Duration
	backAt   time.Duration // when the last ejection ended (spi.Mono())

	// notBack: the last ejection ended while the provider was not
	// connected (the liveness check had closed its connection, and the
	// consumer was redialling): "back in use" is logged when it is
	// connected again (noteBack), not at the ejection's end.
	notBack atomic.Bool

	// held: the ejection's length has passed while a connection's
	// liveness check was waiting for its ping's answer (the calls that
	// ejected it timed out with nothing read since), and r's checkEnded
	// is registered with that check (exchange.Channel.WhenCheckEnds): the
	// provider stays ejected until the ping is answered (back in use
	// then) or the check closes the connection (tester86 #1: a hung
	// provider was "back in use" after outlier.ejection, 5 s, while its
	// ping, waiting the call's timeout, 10 s, was unanswered, and took
	// calls until the check closed its connection). heldSaid: the hold's
	// line is logged, once per ejection (under mu).
	held     atomic.Bool
	heldSaid bool

	// checkSaid: the start (UnixNano) of the last liveness check whose
	// hold checkHolds logged, one line per check.
	checkSaid atomic.Int64
	holdMu    sync.Mutex // one look at a time holds (holdForCheck) or ends an ejection (ejectedNow)

	// The "not ejected" WARN is written at most once per outlier.ejection
	// per provider: warnedAt is when the last one was (spi.Mono()),
	// warned whether there was one, muted the streaks not logged since.
	warned   bool
	warnedAt time.Duration
	muted    int64
}

// maxStreakShown bounds the statuses a streak keeps for its log line.
const maxStreakShown = 16

// outlierVerdict is what one call's outcome says about its provider.
type outlierVerdict int

const (
	verdictNone    outlierVerdict = iota // says nothing: neither counts nor resets the streak
	verdictHealthy                       // the provider answered: resets the streak
	verdictFailed                        // counts in the streak
)

// outlierVerdictOf classifies a call's error. Counted: SERVER_TIMEOUT
// (no answer within the call's whole timeout: a black-holed, lossy or
// stuck provider), CHANNEL_INACTIVE (its connection died under the call
// or is down) and SERVER_ERROR (the provider failed outside the method's
// own answer: a panic, a plugin process gone, a call abandoned at
// shutdown), Envoy's 5xx and gateway failures. A timeout counts only when
// the provider had the whole of its timeout (timeoutCut false): a caller's
// shorter context deadline says nothing about the provider. Answers from
// a live provider reset the streak: success, SERVICE_ERROR (the method's
// own error), BAD_REQUEST, BAD_RESPONSE (as Envoy's non-5xx answers
// reset consecutive_5xx). Neither: CLIENT_* (the consumer's own failure
// or cancellation, often before sending), SERIALIZATION_ERROR,
// SERVICE_NOT_FOUND (a configuration matter that failover already routes
// around), and SERVER_THREADPOOL_EXHAUSTED: a fast refusal from a
// provider at its limit costs its caller microseconds, not a timeout, and
// ejecting busy providers would take capacity away when it is scarcest,
// pushing the load onto the others (a cascade).
func outlierVerdictOf(err error, timeoutCut bool) outlierVerdict {
	switch spi.StatusOf(err) {
	case spi.StatusOK, spi.StatusServiceError, spi.StatusBadRequest, spi.StatusBadResponse:
		return verdictHealthy
	case spi.StatusServerTimeout:
		if timeoutCut {
			return verdictNone
		}
		return verdictFailed
	case spi.StatusChannelInactive, spi.StatusServerError:
		return verdictFailed
	default:
		return verdictNone
	}
}

// observeOutlier counts the outcome of one call, inv, on r, which
// began at start (spi.Mono()), and ejects r when its streak
// reaches outlier.consecutive and the group allows it.
func (r *remoteInvoker) observeOutlier(ctx context.Context, inv *spi.Invocation, err error, start time.Duration) {
	o := &r.out
	if err == nil {
		if o.streak.Load() != 0 {
			o.reset()
		}
		return
	}
	cut := false
	if spi.StatusOf(err) == spi.StatusServerTimeout {
		if d, ok := ctx.Deadline(); ok {
			timeout := DefaultTimeout
			if cc, cerr := r.conf(inv.Method); cerr == nil {
				timeout = cc.timeout
			}
			if t, terr := attemptTimeout(inv, timeout); terr == nil {
				timeout = t // the caller's, for this call
			}
			cut = d.Sub(spi.MonoTime(start)) < timeout
		}
	}
	switch outlierVerdictOf(err, cut) {
	case verdictHealthy:
		if o.streak.Load() != 0 {
			o.reset()
		}
		return
	case verdictNone:
		return
	}
	o.mu.Lock()
	if len(o.statuses) < maxStreakShown {
		o.statuses = append(o.statuses, spi.StatusOf(err))
	}
	o.lastErr = err.Error()
	n := o.streak.Add(1)
	o.mu.Unlock()
	if n >= o.conf.consecutive {
		r.eject(n)
	}
}

// reset ends the failure streak.
func (o *outlierState) reset() {
	o.mu.Lock()
	o.streak.Store(0)
	o.statuses = o.statuses[:0]
	o.lastErr = ""
	o.mu.Unlock()
}

// ejectedNow reports whether r is ejected at now (spi.Mono());
// an ejection that has ended is ended here, with its INFO line (the
// first look after its end, or its timer: ejectionOver):
// "back in use" when r is connected, else "ejection ended ... still not
// connected" (tester76 #1: it said back in use while the provider was
// still unreachable), and "back in use" then follows when a connection
// is up again (noteBack). An ejection whose length passes while a
// connection's liveness check waits for its ping's answer does not end
// then: holdForCheck keeps r ejected until the check ends.
func (r *remoteInvoker) ejectedNow(now time.Duration) bool {
	o := &r.out
	if !o.ejected.Load() {
		return false
	}
	if now < time.Duration(o.until.Load()) {
		return true
	}
	if o.held.Load() {
		return true // one atomic load while a liveness check holds it
	}
	// One look at a time decides, under holdMu, whether a liveness check
	// holds r, else ends the ejection: a look that answered "ejected"
	// while another was finding no check waiting and ending the ejection
	// (fix-bh's first cut) left the directory's list without r, built
	// after the epoch's bump, so r got no call until something else
	// changed (TestT25_N4_RecoveredProviderTakenBack, 2 runs in 4).
	o.holdMu.Lock()
	if !o.ejected.Load() {
		o.holdMu.Unlock()
		return false // ended by the look this one waited for
	}
	if o.held.Load() || r.holdForCheck() {
		o.holdMu.Unlock()
		return true
	}
	o.mu.Lock()
	if !o.ejected.CompareAndSwap(true, false) {
		o.mu.Unlock()
		o.holdMu.Unlock()
		return false
	}
	o.backAt = time.Duration(o.until.Load()) // when it ended, however late this look
	heldFor := time.Duration(0)
	if o.heldSaid {
		// its liveness ping held it past its length: it ended now
		heldFor = max(0, now-o.backAt)
		o.backAt = max(o.backAt, now)
	}
	length := o.length
	o.streak.Store(0) // the next streak starts afresh
	o.statuses = o.statuses[:0]
	o.lastErr = ""
	up := r.connected()
	o.notBack.Store(!up)
	o.mu.Unlock()
	o.holdMu.Unlock()
	// after the change, as directory.Watched asks: a list built since
	// the last bump, which may have found r still ejected, is stale now
	r.bumpEpoch()
	attrs := []any{"provider", r.url.Address(), "service", r.url.ServiceKey(), "ejected_for", length}
	if heldFor > 0 {
		attrs = append(attrs, "held_for_liveness_ping", heldFor.Round(time.Millisecond))
	}
	if up {
		o.log.Info(msgBackInUse, attrs...)
	} else {
		o.log.Info("provider's ejection ended; it is still not connected, reconnecting", attrs...)
	}
	return false
}

// holdForCheck reports whether r, whose ejection's length has passed,
// stays ejected because one of its connections' liveness check is
// waiting for its ping's answer (held). It registers checkEnded with
// every check waiting (exchange.Channel.WhenCheckEnds) and logs, once per
// ejection, that the ejection ended and the provider is still ejected;
// checkEnded ends the hold when a check ends, answered or with its
// connection closed, and looks again. Caller holds o.holdMu, with held
// false.
func (r *remoteInvoker) holdForCheck() bool {
	o := &r.out
	// held is set before registering: a check that ends at once clears
	// it (checkEnded), after.
	o.held.Store(true)
	var sent, due time.Time
	pending := false
	for _, c := range r.conns {
		if !c.ready() {
			continue
		}
		st := c.state.Load()
		if st == nil || st.ch == nil {
			continue // went down since
		}
		w, ok := st.ch.(interface {
			WhenCheckEnds(func()) (sent, due time.Time, pending bool)
		})
		if !ok {
			continue
		}
		if s, d, p := w.WhenCheckEnds(r.checkEnded); p {
			if !pending || s.Before(sent) {
				sent, due = s, d
			}
			pending = true
		}
	}
	if !pending {
		o.held.Store(false)
		return false
	}
	o.mu.Lock()
	say := !o.heldSaid
	o.heldSaid = true
	length := o.length
	o.mu.Unlock()
	if say {
		ago := time.Since(sent).Round(100 * time.Millisecond)
		o.log.Info(fmt.Sprintf("provider's ejection ended; still ejected: its liveness ping sent %v ago is unanswered", ago),
			"provider", r.url.Address(), "service", r.url.ServiceKey(), "ejected_for", length,
			"ping_sent_ago", ago, "closing_if_unanswered_in", max(0, time.Until(due)).Round(100*time.Millisecond))
	}
	return true
}

// checkEnded runs when a liveness check holdForCheck waits for has ended
// (on the check's goroutine): the hold ends, and r is looked at again
// (ejectionOver): back in use if connected and no other check waits,
// "still not connected" if the check closed the connection.
func (r *remoteInvoker) checkEnded() {
	r.out.held.Store(false)
	r.ejectionOver()
}

// ejectionOver runs when an ejection's length has passed (eject's
// timer): the ejection ends now (ejectedNow, which bumps the epoch: the
// directory's list takes the provider back), unless a liveness check
// holds it (holdForCheck), with its line ("back in use" when connected,
// else "ejection ended ... still not connected", and "back in use" when a
// connection comes up: connUp), rather than at the directory's next look,
// which a reference with no calls and no metrics scrape makes late or
// never. Nothing is logged once r is closed; an ejection that a look has
// ended already is not ended twice (ejectedNow).
func (r *remoteInvoker) ejectionOver() {
	if r.closed.Load() {
		r.bumpEpoch()
		return
	}
	r.ejectedNow(spi.Mono())
}

// msgBackInUse is the INFO line of a provider that can be picked again
// after an ejection: connected and not ejected, whichever came last.
const msgBackInUse = "ejected provider back in use"

// noteBack logs "back in use" for a provider whose ejection ended while
// it was not connected, once it is connected again: when a connection
// comes up (connUp), or Available finds r connected first. Once: the
// first of them to swap notBack logs it. It costs one atomic load when
// there is nothing to say.
func (r *remoteInvoker) noteBack() {
	o := &r.out
	if !o.notBack.Load() || !o.notBack.CompareAndSwap(true, false) {
		return
	}
	o.mu.Lock()
	length, since := o.length, spi.Mono()-o.backAt
	o.mu.Unlock()
	o.log.Info(msgBackInUse, "provider", r.url.Address(), "service", r.url.ServiceKey(), "ejected_for", length,
		"not_connected_for", since.Round(time.Millisecond))
}

// eject takes r out of its reference's picks for its next ejection
// length, unless r is already out, its connections are down or draining
// (it is not picked then anyway), it is the reference's last available
// provider, or ejecting it would take more than outlier.max.percent of the
// reference's providers out. The last two are said (a WARN naming the
// provider: its calls are failing) when a streak reaches
// outlier.consecutive, at most once per outlier.ejection per provider
// (the length of the ejection it did not get); the next such line counts
// the streaks left out since the last one in streaks_not_logged.
func (r *remoteInvoker) eject(n int64) {
	o := &r.out
	g := o.group
	first := n == o.conf.consecutive
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := spi.Mono()
	if r.ejectedNow(now) || !r.connected() {
		return
	}
	out, othersUp := 0, false
	for _, m := range g.members {
		if m.ejectedNow(now) {
			out++
			continue
		}
		if m != r && m.connected() {
			othersUp = true
		}
	}
	why := ""
	switch {
	case !othersUp:
		why = "it is the reference's last available provider"
	case (int64(out)+1)*100 > int64(len(g.members))*o.conf.maxPercent:
		why = fmt.Sprintf("%d of the reference's %d providers are ejected already (outlier.max.percent %d)", out, len(g.members), o.conf.maxPercent)
	}
	o.mu.Lock()
	streak, last := describeStreak(o.statuses, n), o.lastErr
	if why != "" {
		if !first {
			o.mu.Unlock()
			return
		}
		// One line per provider per outlier.ejection at most: with
		// successes between short streaks (a provider near its callers'
		// timeout) each streak would write one (223 lines in
		// 0.8 s). The next line counts the streaks left out.
		if o.warned && now-o.warnedAt < o.conf.ejection {
			o.muted++
			o.mu.Unlock()
			return
		}
		muted := o.muted
		o.warned, o.warnedAt, o.muted = true, now, 0
		o.mu.Unlock()
		o.log.Warn("provider's calls keep failing; not ejected: "+why, "provider", r.url.Address(), "service", r.url.ServiceKey(),
			"streak", streak, "last_error", last, "streaks_not_logged", muted, "logged_at_most_every", o.conf.ejection)
		return
	}
	// Each ejection soon after the last doubles its length; the doubling
	// steps down once per outlier.ejection the provider has served since
	// (Envoy and gRPC step their multiplier down per interval without
	// ejection; Envoy grows it linearly, doubling reaches the cap sooner).
	if o.level > 0 && o.conf.ejection > 0 {
		o.level = max(0, o.level-int((now-o.backAt)/o.conf.ejection))
	}
	length := min(o.conf.ejection<<min(o.level, 30), max(MaxOutlierEjection, o.conf.ejection))
	if length <= 0 { // shifted past int64
		length = max(MaxOutlierEjection, o.conf.ejection)
	}
	o.level = min(o.level+1, 31)
	o.length = length
	o.notBack.Store(false) // connected again (eject needs it) and out again: no back line owed
	o.heldSaid = false
	o.streak.Store(0)
	o.statuses = o.statuses[:0]
	o.lastErr = ""
	o.mu.Unlock()
	o.until.Store(int64(now + length))
	o.ejected.Store(true)
	r.bumpEpoch()                          // the directory's list leaves it out now
	time.AfterFunc(length, r.ejectionOver) // and takes it back at the end, which is logged then
	counters.Outlier.Ejections.Inc()
	o.log.Warn("provider ejected: its calls keep failing; not picked until the ejection ends", "provider", r.url.Address(), "service", r.url.ServiceKey(),
		"streak", streak, "ejection", length, "last_error", last)
}

// describeStreak says a streak of n failures: "SERVER_TIMEOUT ×5", or
// its runs in order, "SERVER_TIMEOUT ×3, CHANNEL_INACTIVE ×2" (the first
// maxStreakShown statuses, then "… (n in a row)").
func describeStreak(statuses []spi.Status, n int64) string {
	var b strings.Builder
	for i := 0; i < len(statuses); {
		j := i
		for j < len(statuses) && statuses[j] == statuses[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d", statuses[i], j-i)
		i = j
	}
	if int64(len(statuses)) < n {
		fmt.Fprintf(&b, ", … (%d in a row)", n)
	}
	return b.String()
}

// checking returns when the earliest liveness check waiting for its
// ping's answer on one of r's ready connections started, and true
// (exchange.Channel.CheckRunning); false when none waits.
func (r *remoteInvoker) checking() (since time.Time, on bool) {
	for _, c := range r.conns {
		if !c.ready() {
			continue
		}
		st := c.state.Load()
		if st == nil || st.ch == nil {
			continue
		}
		cr, ok := st.ch.(interface{ CheckRunning() (time.Time, bool) })
		if !ok {
			continue
		}
		if s, run := cr.CheckRunning(); run && (!on || s.Before(since)) {
			since, on = s, true
		}
	}
	return since, on
}

// checkHolds reports whether r, not ejected and connected, is left out
// of its reference's picks because a liveness check on one of its
// connections waits for its ping's answer: calls to it timed out (or
// waited past their QuietBound) with nothing read since they were sent,
// the strongest sign of a hung provider a busy channel gives
// (exchange.Channel.checkAfterTimeout). Without this the balancer went on
// picking it for the ping's whole wait, max(1s, timeout), and a second
// wave of calls waited on it until the check closed the connection
// (tester102 #1). The rules of an ejection hold: not when no other
// provider of the reference is usable (connected, not ejected, not held
// so), nor beyond outlier.max.percent of them out at once, ejected or
// held, the first of the reference's providers in its order held first;
// not with outlier.consecutive 0 or a provider alone. It ends when the
// check does (exchange.Options.OnCheck bumps the epoch): the ping
// answered (a slow provider answers pings at once, off its workers: it
// is left out for a round trip) or the connection closed (down, then
// redialled). One INFO line per check. Called by Available only, after
// an epoch's bump: the per-call cost stays the directory's cached list.
func (r *remoteInvoker) checkHolds() bool {
	o := &r.out
	g := o.group
	if g == nil || o.conf.consecutive == 0 {
		return false
	}
	since, on := r.checking()
	if !on {
		return false
	}
	g.mu.Lock()
	now := spi.Mono()
	out, ahead, usable, seen := 0, 0, false, false
	for _, m := range g.members {
		if m == r {
			seen = true
			continue
		}
		if m.ejectedNow(now) {
			out++
			continue
		}
		if !m.connected() {
			continue
		}
		if _, c := m.checking(); c {
			if !seen {
				ahead++ // held before r, if any is
			}
			continue
		}
		usable = true
	}
	n := len(g.members)
	g.mu.Unlock()
	if !usable || int64(out+ahead+1)*100 > int64(n)*o.conf.maxPercent {
		return false
	}
	if at := since.UnixNano(); o.checkSaid.Load() != at && o.checkSaid.Swap(at) != at {
		o.log.Info("provider not picked while its liveness ping is unanswered: its calls timed out, or waited, with nothing read since they were sent; picked again when it answers, or once reconnected",
			"provider", r.url.Address(), "service", r.url.ServiceKey(), "ping_sent_ago", time.Since(since).Round(time.Millisecond))
	}
	return true
}
