package cli

import (
	"math"
	"syscall"
	"testing"
	"time"
)

// bench --json's timeline gives each second's calls per second per
// provider: with roundrobin over two providers both take calls in the
// first second; once one is stopped (SIGTERM, about 1 s into the measured
// phase) the later seconds list the other only. Each full second's rates
// add up to about its calls.
func TestCfg2_BenchTimelineProvidersPerSec(t *testing.T) {
	regDir := t.TempDir()
	p1 := serve(t, "127.0.0.1:0", regDir)
	p2 := serve(t, "127.0.0.1:0", regDir, "--shutdown-wait", "0")
	go func() {
		time.Sleep(2500 * time.Millisecond) // bench's start-up and warm-up, then about 1-2 s measured
		_ = p2.cmd.Process.Signal(syscall.SIGTERM)
	}()
	r := benchJSON(t, nil, "--registry", "file://"+regDir, "demo.Echo?loadbalance=roundrobin", "--duration", "5s", "-c", "4", "--warmup", "100")
	if len(r.Timeline) < 5 {
		t.Fatalf("timeline of %d seconds, want 5 or 6: %+v", len(r.Timeline), r.Timeline)
	}
	first, last := r.Timeline[0], r.Timeline[4]
	if first.ProvidersPerSec[p1.addr] <= 0 || first.ProvidersPerSec[p2.addr] <= 0 {
		t.Errorf("second 0: providers_per_sec %v, want both %s and %s", first.ProvidersPerSec, p1.addr, p2.addr)
	}
	if _, ok := last.ProvidersPerSec[p2.addr]; ok || last.ProvidersPerSec[p1.addr] <= 0 || len(last.ProvidersPerSec) != 1 {
		t.Errorf("second 4: providers_per_sec %v, want %s only (%s was stopped)", last.ProvidersPerSec, p1.addr, p2.addr)
	}
	for _, s := range r.Timeline[:5] {
		var rate float64
		for _, v := range s.ProvidersPerSec {
			rate += v
		}
		// each rate is sampled over about a second that starts up to
		// 0.2 s late: generous bounds
		if math.Abs(rate-float64(s.Calls)) > 0.5*float64(s.Calls)+50 {
			t.Errorf("second %d: %d calls, providers_per_sec %v add up to %.1f", s.Second, s.Calls, s.ProvidersPerSec, rate)
		}
	}
	t.Logf("providers %v; timeline %+v", r.Providers, r.Timeline)
}
