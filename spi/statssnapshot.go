package spi

import "time"

// StatsSnapshot is a point-in-time copy of an invoker's Stats, in a form that
// can cross a process boundary (the plugin SDK sends it to a balancer that
// runs in a plugin process).
type StatsSnapshot struct {
	Active int64 // calls in flight (Stats.Active)
	Total  int64 // finished calls, failed ones included (Stats.Total)
	Failed int64 // finished calls that failed (Stats.Failed)
	// Elapsed is the summed duration of all finished calls.
	Elapsed time.Duration
	// MeanResponse and MeanCount are what Stats.MeanResponse returned:
	// the mean duration of the successful calls in the sliding window,
	// and how many calls it is based on (0 and 0: none).
	MeanResponse time.Duration
	MeanCount    int64 // the number of calls MeanResponse is the mean of
	// OldestInFlight is what OldestInFlight returned (0: no call in
	// flight).
	OldestInFlight time.Duration
}

// Snapshot copies s. Never blocks for long; safe for concurrent use.
func (s *Stats) Snapshot() StatsSnapshot {
	mean, n := s.MeanResponse()
	return StatsSnapshot{
		Active: s.Active(), Total: s.Total(), Failed: s.Failed(),
		Elapsed: s.Elapsed(), MeanResponse: mean, MeanCount: n,
		OldestInFlight: s.OldestInFlight(Mono()),
	}
}

// StatsFromSnapshot returns Stats that report snap: Active, Total, Failed
// and Elapsed as given, MeanResponse as given for one slide period from
// now, and OldestInFlight as given, growing from now on. Begin/End keep
// working on the result.
func StatsFromSnapshot(snap StatsSnapshot) *Stats {
	s := &Stats{}
	s.active.Store(snap.Active)
	s.total.Store(snap.Total)
	s.failed.Store(snap.Failed)
	s.elapsed.Store(int64(snap.Elapsed))
	if snap.Active > 0 {
		s.progress.Store(int64(Mono() - snap.OldestInFlight))
	}
	if snap.MeanCount > 0 {
		s.windowStart = time.Now()
		s.cur = window{n: snap.MeanCount, elapsed: snap.MeanResponse * time.Duration(snap.MeanCount)}
	}
	return s
}
