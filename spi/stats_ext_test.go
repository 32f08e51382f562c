package spi_test

import (
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

func TestStatsCounters(t *testing.T) {
	var s spi.Stats
	s.Begin()
	s.Begin()
	if s.Active() != 2 {
		t.Fatalf("active %d, want 2", s.Active())
	}
	s.End(10*time.Millisecond, true)
	s.End(30*time.Millisecond, false)
	if s.Active() != 0 || s.Total() != 2 || s.Failed() != 1 || s.Elapsed() != 40*time.Millisecond {
		t.Fatalf("active %d total %d failed %d elapsed %v", s.Active(), s.Total(), s.Failed(), s.Elapsed())
	}
	// Only successes enter the window.
	if mean, n := s.MeanResponse(); mean != 10*time.Millisecond || n != 1 {
		t.Fatalf("mean %v over %d, want 10ms over 1", mean, n)
	}
}

func TestStatsWindow(t *testing.T) {
	s := spi.Stats{SlidePeriod: time.Hour}
	if mean, n := s.MeanResponse(); mean != 0 || n != 0 {
		t.Fatalf("empty: %v %d", mean, n)
	}
	for _, d := range []time.Duration{10, 20, 30} {
		s.Begin()
		s.End(d*time.Millisecond, true)
	}
	now := time.Now()
	if mean, n := s.MeanResponseAt(now); mean != 20*time.Millisecond || n != 3 {
		t.Fatalf("current window: %v over %d, want 20ms over 3", mean, n)
	}
	// One period later the samples are the previous window, still used
	// while the current one is empty.
	if mean, n := s.MeanResponseAt(now.Add(time.Hour + time.Second)); mean != 20*time.Millisecond || n != 3 {
		t.Fatalf("previous window: %v over %d, want 20ms over 3", mean, n)
	}
	// Two periods later they are gone.
	if mean, n := s.MeanResponseAt(now.Add(3 * time.Hour)); mean != 0 || n != 0 {
		t.Fatalf("after two periods: %v over %d, want none", mean, n)
	}
}

func TestStatsConcurrent(t *testing.T) {
	var s spi.Stats
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 1000 {
				s.Begin()
				s.MeanResponse()
				s.End(time.Millisecond, i%2 == 0)
			}
		})
	}
	wg.Wait()
	if s.Active() != 0 || s.Total() != 8000 || s.Failed() != 4000 {
		t.Fatalf("active %d total %d failed %d", s.Active(), s.Total(), s.Failed())
	}
	if mean, n := s.MeanResponse(); mean != time.Millisecond || n != 4000 {
		t.Fatalf("mean %v over %d, want 1ms over 4000", mean, n)
	}
}

func TestStatsSetSlidePeriodConcurrent(t *testing.T) {
	var s spi.Stats
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 1000 {
			s.SetSlidePeriod(time.Duration(i+1) * time.Millisecond)
		}
	})
	wg.Go(func() {
		for range 1000 {
			s.Begin()
			s.End(time.Millisecond, true)
			s.MeanResponse()
		}
	})
	wg.Wait()
	if s.Total() != 1000 || s.Active() != 0 {
		t.Fatalf("total %d active %d", s.Total(), s.Active())
	}
}

// OldestInFlight is 0 with nothing in flight; with calls in flight it is
// the time since the last End, or since the Begin that found none in
// flight: a lower bound on the oldest call's wait.
func TestStatsOldestInFlight(t *testing.T) {
	var s spi.Stats
	now := spi.Mono()
	if got := s.OldestInFlight(now); got != 0 {
		t.Fatalf("nothing in flight: %v, want 0", got)
	}
	s.BeginAt(now - 3*time.Second) // first of the calls in flight
	s.BeginAt(now - time.Second)
	if got := s.OldestInFlight(now); got != 3*time.Second {
		t.Fatalf("two in flight, the first 3 s old: %v, want 3s", got)
	}
	s.EndAt(spi.MonoTime(now-500*time.Millisecond), 2500*time.Millisecond, true)
	if got := s.OldestInFlight(now); got != 500*time.Millisecond {
		t.Fatalf("one left, the last End 500 ms ago: %v, want 500ms", got)
	}
	s.End(time.Second, false) // a failure stamps the clock itself
	if got := s.OldestInFlight(spi.Mono()); got != 0 {
		t.Fatalf("nothing in flight after the last End: %v, want 0", got)
	}
	s.Begin()
	time.Sleep(20 * time.Millisecond)
	if got := s.OldestInFlight(spi.Mono()); got < 20*time.Millisecond || got > 5*time.Second {
		t.Fatalf("one call begun 20 ms ago: %v", got)
	}
}

// A snapshot carries OldestInFlight, and Stats made from it report it,
// growing from then on (a balancer in a plugin process reads it so).
func TestStatsSnapshotCarriesOldestInFlight(t *testing.T) {
	var s spi.Stats
	s.BeginAt(spi.Mono() - 2*time.Second)
	snap := s.Snapshot()
	if snap.OldestInFlight < 2*time.Second || snap.OldestInFlight > 3*time.Second {
		t.Fatalf("snapshot OldestInFlight %v, want about 2s", snap.OldestInFlight)
	}
	r := spi.StatsFromSnapshot(snap)
	time.Sleep(10 * time.Millisecond)
	if got := r.OldestInFlight(spi.Mono()); got < snap.OldestInFlight+10*time.Millisecond || got > snap.OldestInFlight+time.Second {
		t.Fatalf("rebuilt Stats: OldestInFlight %v, want %v + 10 ms or a little more", got, snap.OldestInFlight)
	}
	if got := spi.StatsFromSnapshot(spi.StatsSnapshot{}).OldestInFlight(spi.Mono()); got != 0 {
		t.Fatalf("nothing in flight: %v", got)
	}
}
