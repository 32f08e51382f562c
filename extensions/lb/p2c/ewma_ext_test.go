package p2c_test

import (
	"math"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/p2c"
)

const ms = time.Millisecond

func near(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if math.Abs(float64(got-want)) > float64(want)/1000+1 {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

func TestPeakEWMAFirstSampleAndPeakJump(t *testing.T) {
	e := p2c.PeakEWMA{Decay: 10 * time.Second}
	if v, ok := e.Value(0); ok || v != 0 {
		t.Fatalf("no sample: %v, %v; want 0, false", v, ok)
	}
	e.Observe(0, 2*ms)
	v, ok := e.Value(0)
	if !ok {
		t.Fatal("no estimate after a sample")
	}
	near(t, "first sample", v, 2*ms)
	// A slower sample replaces the estimate at once, however soon.
	e.Observe(time.Microsecond, 40*ms)
	v, _ = e.Value(time.Microsecond)
	near(t, "peak", v, 40*ms)
}

func TestPeakEWMADecaysTowardFasterSamples(t *testing.T) {
	const tau = 10 * time.Second
	e := p2c.PeakEWMA{Decay: tau}
	e.Observe(0, 40*ms)
	// One time constant later a 2 ms sample: 40·e⁻¹ + 2·(1-e⁻¹).
	e.Observe(tau, 2*ms)
	want := time.Duration(40e6*math.Exp(-1) + 2e6*(1-math.Exp(-1)))
	v, _ := e.Value(tau)
	near(t, "after one faster sample a time constant later", v, want)

	// Fast samples in a burst move it little: 1,000 of them within 1 ms
	// weigh as one sample 1 ms after the last.
	f := p2c.PeakEWMA{Decay: tau}
	f.Observe(0, 40*ms)
	for i := 1; i <= 1000; i++ {
		f.Observe(time.Duration(i)*time.Microsecond, 2*ms)
	}
	v, _ = f.Value(ms)
	want = time.Duration(2e6 + 38e6*math.Exp(-float64(ms)/float64(tau)))
	near(t, "after a 1 ms burst", v, want)

	// A sample as slow as the estimate counts as a peak: no change.
	f.Observe(2*ms, v)
	if w, _ := f.Value(2 * ms); w != v {
		t.Fatalf("equal sample: %v, want %v", w, v)
	}
}

func TestPeakEWMAValueDecaysWithoutSamples(t *testing.T) {
	const tau = 10 * time.Second
	e := p2c.PeakEWMA{Decay: tau}
	e.Observe(5*time.Second, 20*ms)
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{
		{5 * time.Second, 20 * ms},
		{4 * time.Second, 20 * ms}, // before the sample: no decay
		{15 * time.Second, time.Duration(20e6 * math.Exp(-1))},
		{25 * time.Second, time.Duration(20e6 * math.Exp(-2))},
		{5*time.Second + 100*tau, 0},
	} {
		v, _ := e.Value(tc.at)
		near(t, "at "+tc.at.String(), v, tc.want)
	}
	// Reading does not change it.
	v, _ := e.Value(5 * time.Second)
	near(t, "read again", v, 20*ms)
}

func TestPeakEWMAZeroDecayFollowsEverySample(t *testing.T) {
	var e p2c.PeakEWMA
	e.Observe(0, 10*ms)
	e.Observe(time.Second, ms)
	if v, _ := e.Value(time.Second); v != ms {
		t.Fatalf("Decay 0: %v, want the last sample 1ms", v)
	}
	e.Observe(2*time.Second, -ms)
	if v, _ := e.Value(2 * time.Second); v != 0 {
		t.Fatalf("negative sample: %v, want 0", v)
	}
}

// A probe's answer starts Rejoining at 1, decaying with Decay; an
// estimate never probed is not rejoining (tester67 #7).
func TestPeakEWMARejoining(t *testing.T) {
	e := p2c.PeakEWMA{Decay: 10 * time.Second}
	e.Observe(0, time.Millisecond)
	if r := e.Rejoining(time.Second); r != 0 {
		t.Fatalf("Rejoining before any probe = %v; want 0", r)
	}
	if !e.Probe(2 * time.Second) {
		t.Fatal("estimate not stale after 2 s (StaleAfter 1s)")
	}
	e.Observe(3*time.Second, 100*time.Microsecond)
	if r := e.Rejoining(3 * time.Second); r != 1 {
		t.Errorf("Rejoining at the probe's answer = %v; want 1", r)
	}
	if r := e.Rejoining(13 * time.Second); math.Abs(r-math.Exp(-1)) > 1e-9 {
		t.Errorf("Rejoining one Decay after = %v; want e^-1", r)
	}
}
