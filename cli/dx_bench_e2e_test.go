package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// fix-dx (tester103 #1): SIGINT while every call is stalled (Hold: 2 s,
// the provider answering none before the interrupt) reports the calls it
// cut short, with the oldest one's age, in the summary and --json, in
// both loops; the timeline lists every second up to the end, with 0
// calls (it was [] and "late_starts": 0, the stall gone).
func TestDX_BenchReportsCallsCutShort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	svc, addr := exportSlowEcho(t, ctx)
	for _, loop := range [][]string{{"-c", "8"}, {"--rate", "20"}} {
		base := svc.held.Load()
		began := time.Now()
		// Hold lasts 2 s: SIGINT after 1.2 s cuts every call in flight
		ready := func() bool { return svc.held.Load()-base >= 8 && time.Since(began) > 1200*time.Millisecond }
		r := interruptBenchWhen(t, addr, "8 calls held for 1.2 s", ready, append(loop, "--method", "Hold", "--duration", "30s", "--json")...)
		var o struct {
			Calls            int64   `json:"calls"`
			CutShort         int64   `json:"cut_short"`
			CutShortOldestUS float64 `json:"cut_short_oldest_us"`
			Timeline         []struct {
				Second int   `json:"second"`
				Calls  int64 `json:"calls"`
			} `json:"timeline"`
			ElapsedSec float64 `json:"elapsed_sec"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("%v: stdout %q: %v", loop, r.stdout, err)
		}
		oldest := o.CutShortOldestUS
		if r.code != 130 || o.Calls != 0 || o.CutShort < 8 || oldest < 0.8e6 || oldest > 10e6 {
			t.Fatalf("%v: exit %d, %d calls, %d cut short, oldest %.0f µs: want 130, 0 calls, 8 or more cut short, the oldest about 1.2 s\n%s",
				loop, r.code, o.Calls, o.CutShort, oldest, r.stdout)
		}
		if len(o.Timeline) < 2 || o.Timeline[len(o.Timeline)-1].Second != len(o.Timeline)-1 || float64(len(o.Timeline)) < o.ElapsedSec {
			t.Fatalf("%v: timeline %+v over %.2f s: want every second up to the end", loop, o.Timeline, o.ElapsedSec)
		}
	}
	// the summary says it too
	base := svc.held.Load()
	r := interruptBenchWhen(t, addr, "8 calls held", func() bool { return svc.held.Load()-base >= 8 }, "-c", "8", "--method", "Hold", "--duration", "30s")
	if !strings.Contains(r.stdout, "  cut short   8 call(s) in flight at the end, the oldest ") {
		t.Fatalf("stdout lacks the cut short line:\n%s", r.stdout)
	}
}

// fix-dx (tester103 #3): a direct URL naming a service the provider does
// not export, or a method the service lacks, is refused at the first
// answer (exit 1, the provider's message naming what it exports), as a
// registry run is, instead of running the whole load to "100000 of
// 100000 calls FAILED".
func TestDX_BenchDirectRefusesServiceNotFound(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, c := range []struct {
		url, method, want string
	}{
		{"greeter.Greeter", "Hello", `service \"greeter.Greeter\" is not exported on ` + p.addr + ` (exported here: demo.Echo`},
		{"demo.Echo", "Nope", `service \"demo.Echo\" has no method \"Nope\" (methods: Echo, Fail, Info, Payload, Sleep)`},
	} {
		r := runCommand(t, 60*time.Second, nil, "bench", p.url(c.url), "--method", c.method, "-n", "100000", "-c", "4", "--json")
		var o struct {
			Error string `json:"error"`
			Calls int64  `json:"calls"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("%s %s: stdout %q: %v", c.url, c.method, r.stdout, err)
		}
		if r.code != 1 || o.Calls != 0 || !strings.Contains(r.stdout, "SERVICE_NOT_FOUND") || !strings.Contains(r.stdout, c.want) {
			t.Fatalf("%s %s: exit %d, stdout %s: want exit 1, {\"error\": ... %s}", c.url, c.method, r.code, r.stdout, c.want)
		}
	}
}
