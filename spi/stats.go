package spi

import (
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSlidePeriod is the length of the window of successful response
// times that Stats keeps (Dubbo's shortestresponse.slidePeriod).
const DefaultSlidePeriod = 30 * time.Second

// Stats are the live call statistics of one invoker, kept by the kernel for
// every call with no configuration: in-flight, total, failed, total elapsed,
// and the mean of successful response times over a sliding window. All
// methods are safe for concurrent use and never block; the zero value is
// ready to use with DefaultSlidePeriod.
//
// Ownership: the kernel's remote invoker records Begin/End around every call
// it makes, whatever the outcome (timeouts and channel deaths included), so
// Active returns to 0. Clusters and load balancers only read Stats; they
// never call Begin or End themselves, so retries and forks are counted once
// per provider call.
type Stats struct {
	active  atomic.Int64
	total   atomic.Int64
	failed  atomic.Int64
	elapsed atomic.Int64 // nanoseconds, all calls
	// progress is the Mono reading (ns) of the last End, or of the Begin
	// that found no call in flight: while calls are in flight, the oldest
	// of them began at or before it (OldestInFlight).
	progress atomic.Int64

	// SlidePeriod overrides DefaultSlidePeriod when set before first use;
	// change it later with SetSlidePeriod.
	SlidePeriod time.Duration

	mu          sync.Mutex
	windowStart time.Time
	cur, prev   window
}

type window struct {
	n       int64
	elapsed time.Duration
}

// Begin records the start of a call (active+1). Every Begin must be paired
// with exactly one End, whatever happens to the call.
func (s *Stats) Begin() {
	if s.active.Add(1) == 1 {
		s.progress.Store(int64(Mono()))
	}
}

// BeginAt is Begin for a call that began at start (a Mono reading), for a
// caller that has just read the clock to time the call.
func (s *Stats) BeginAt(start time.Duration) {
	if s.active.Add(1) == 1 {
		s.progress.Store(int64(start))
	}
}

// End records the end of a call that took elapsed; ok says whether it
// succeeded. Only successful calls enter the response-time window.
func (s *Stats) End(elapsed time.Duration, ok bool) {
	var now time.Time
	if ok {
		now = time.Now()
	}
	s.EndAt(now, elapsed, ok)
}

// EndAt is End for a call that ended at now (a time with a monotonic
// reading), for a caller that has just read the clock to measure elapsed
// and so spares End reading it again; now may be the zero Time when ok
// is false (End passes it so), and the clock is then read here.
func (s *Stats) EndAt(now time.Time, elapsed time.Duration, ok bool) {
	if now.IsZero() {
		s.progress.Store(int64(Mono()))
	} else {
		s.progress.Store(int64(now.Sub(monoBase)))
	}
	s.active.Add(-1)
	s.total.Add(1)
	s.elapsed.Add(int64(elapsed))
	if !ok {
		s.failed.Add(1)
		return
	}
	s.mu.Lock()
	s.rotate(now)
	s.cur.n++
	s.cur.elapsed += elapsed
	s.mu.Unlock()
}

func (s *Stats) period() time.Duration {
	if s.SlidePeriod > 0 {
		return s.SlidePeriod
	}
	return DefaultSlidePeriod
}

// rotate starts a new window when the current one is older than the period.
func (s *Stats) rotate(now time.Time) {
	if s.windowStart.IsZero() {
		s.windowStart = now
		return
	}
	p := s.period()
	if d := now.Sub(s.windowStart); d >= p {
		if d >= 2*p {
			s.prev = window{}
		} else {
			s.prev = s.cur
		}
		s.cur = window{}
		s.windowStart = now
	}
}

// SetSlidePeriod changes the window length (d <= 0 restores
// DefaultSlidePeriod) at any time, safely with concurrent use: the
// shortestresponse balancer applies its reference's KeySlidePeriod this way.
// The current window keeps its start; the new length applies from now on.
func (s *Stats) SetSlidePeriod(d time.Duration) {
	s.mu.Lock()
	s.SlidePeriod = d
	s.mu.Unlock()
}

// Active returns the number of calls in flight.
func (s *Stats) Active() int64 { return s.active.Load() }

// OldestInFlight returns, at now (a Mono reading), a lower bound on how
// long the oldest call in flight has been waiting: the time since the
// last call ended, or since the first of the calls in flight began if
// none ended since; 0 when no call is in flight. A provider that stalls
// (SIGSTOP, a long GC pause, a black-holed path) finishes nothing, so
// this grows with the stall while its past response times stay fast:
// latency-aware balancers take it as a response time the provider has
// already shown (Finagle's peak EWMA counts pending requests for the same
// reason). A provider whose only calls are long ones (long polls) reads
// as slow while they run.
func (s *Stats) OldestInFlight(now time.Duration) time.Duration {
	if s.active.Load() <= 0 {
		return 0
	}
	return max(now-time.Duration(s.progress.Load()), 0)
}

// Total returns the number of finished calls.
func (s *Stats) Total() int64 { return s.total.Load() }

// Failed returns the number of finished calls that failed.
func (s *Stats) Failed() int64 { return s.failed.Load() }

// Elapsed returns the summed duration of all finished calls.
func (s *Stats) Elapsed() time.Duration { return time.Duration(s.elapsed.Load()) }

// MeanResponse returns the mean duration of successful calls in the current
// sliding window (falling back to the previous window while the current one
// is empty), and the number of calls it is based on; 0, 0 when none.
func (s *Stats) MeanResponse() (time.Duration, int64) { return s.MeanResponseAt(time.Now()) }

// MeanResponseAt is MeanResponse at the instant now, for callers that read
// many Stats in one go (a balancer over a long provider list) and so read
// the clock once.
func (s *Stats) MeanResponseAt(now time.Time) (time.Duration, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rotate(now)
	w := s.cur
	if w.n == 0 {
		w = s.prev
	}
	if w.n == 0 {
		return 0, 0
	}
	return w.elapsed / time.Duration(w.n), w.n
}

// KeySlidePeriod is the reference URL key ("shortestresponse.slidePeriod",
// a positive duration, default DefaultSlidePeriod) for the window length.
// The shortestresponse balancer validates it and, when it is set, applies it
// to the Stats of the invokers it sees (SetSlidePeriod).
const KeySlidePeriod = "shortestresponse.slidePeriod"
