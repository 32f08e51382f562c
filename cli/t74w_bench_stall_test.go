package cli

import (
	"strings"
	"testing"
	"time"
)

// Tester74: calls that are long on purpose are no stall. The real binary
// benches demo.Echo's Sleep of 2.5 s under a 4 s timeout for 6 s: the
// provider finishes no call for 2.5 s at a time, which the old rule (no
// call finished in a second) called "stalled?" every few seconds; the
// calls are not overdue, so no warning.
func TestT74W_BenchLongCallsAreNoStall(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	r := runCommand(t, 60*time.Second, nil, "bench", "airnode://"+p.addr+"/demo.Echo", "--method", "Sleep", "--args", "2500",
		"--timeout", "4s", "-c", "2", "--duration", "6s", "--warmup", "0", "--json")
	if r.code != 0 {
		t.Fatalf("bench exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "finished none") || strings.Contains(r.stderr, "stalled?") {
		t.Errorf("stderr %q: want no stall warning for 2.5 s calls under a 4 s timeout", r.stderr)
	}
	if !strings.Contains(r.stdout, `"ok": `) && !strings.Contains(r.stdout, `"ok":`) {
		t.Errorf("stdout %q: want the JSON report", r.stdout)
	}
}

// stallBound: a silence is overdue at 4 × the longest call finished so
// far (at least 2 s), and never later than twice the timeout (at least
// 5 s); before any call finished, only the timeout says; with neither,
// never.
func TestT74W_StallBound(t *testing.T) {
	const never = time.Duration(1<<63 - 1)
	for _, tc := range []struct {
		longest, timeout, want time.Duration
	}{
		{3 * time.Millisecond, 10 * time.Second, 2 * time.Second},  // a stopped provider of fast calls
		{time.Second, 10 * time.Second, 4 * time.Second},           // 4 × the longest
		{5 * time.Second, 10 * time.Second, 20 * time.Second},      // tester74's Sleep(5000): 20 s, never within a 5 s call
		{5 * time.Second, 6 * time.Second, 12 * time.Second},       // the timeout's bound is the lower
		{0, 10 * time.Second, 20 * time.Second},                    // nothing finished yet
		{0, time.Second, 5 * time.Second},                          // the timeout's floor
		{0, 0, never},                                              // nothing known
		{100 * time.Millisecond, 0, 2 * time.Second},               // no timeout: the calls' length alone
		{2 * time.Second, 500 * time.Millisecond, 5 * time.Second}, // timed-out calls ran long
	} {
		if got := stallBound(tc.longest, tc.timeout); got != tc.want {
			t.Errorf("stallBound(%v, %v) = %v, want %v", tc.longest, tc.timeout, got, tc.want)
		}
	}
}
