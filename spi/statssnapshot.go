package spi

import "time"

// StatsSnapshot is a point-in-time copy of an invoker's Stats, in a form that
// can cross a process boundary (the plugin SDK sends it to a balancer that
// runs in a plugin process).
type StatsSnapshot struct {
	Active, Total, Failed int64
	// Elapsed is the summed duration of all finished calls.
	Elapsed time.Duration
	// MeanResponse and MeanCount are what MeanResponse returned.
	MeanResponse time.Duration
	MeanCount    int64
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
