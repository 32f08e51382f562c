package cli

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"
)

// tester86 #3: bench's report says when its measured phase began, in
// wall-clock time, so that an operator can line the timeline's seconds up
// with deploy and kill times: --json's "start" (RFC 3339 in UTC with
// milliseconds) and the end of the text summary's first line.
func TestBI_BenchReportsWallClockStart(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	inRun := func(what, ts string, before, after time.Time) {
		t.Helper()
		if !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`).MatchString(ts) {
			t.Fatalf("%s start %q; want RFC 3339 in UTC with milliseconds, such as 2026-12-04T05:06:02.536Z", what, ts)
		}
		start, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatalf("%s start %q: %v", what, ts, err)
		}
		if start.Before(before.Truncate(time.Millisecond)) || start.After(after) {
			t.Errorf("%s start %v; want it within the bench process's run, %v to %v", what, start, before.UTC(), after.UTC())
		}
	}

	before := time.Now()
	out := benchRun(t, nil, p.url("demo.Echo"), "-n", "300", "-c", "2", "--json")
	after := time.Now()
	var rep struct {
		Start    string            `json:"start"`
		Timeline []json.RawMessage `json:"timeline"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench --json printed %q: %v", out, err)
	}
	if len(rep.Timeline) == 0 {
		t.Fatalf("bench --json has no timeline: %s", out)
	}
	inRun("--json", rep.Start, before, after)

	before = time.Now()
	out = benchRun(t, nil, p.url("demo.Echo"), "-n", "300", "-c", "2")
	after = time.Now()
	m := regexp.MustCompile(`(?m)^airnode bench \S+: 300 calls in [0-9.]+ s, 2 callers, 1 connection\(s\) per provider, 100 B -> 100 B, started (\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("bench's summary:\n%s\nwant its first line to end with \", started\" and the measured phase's start", out)
	}
	inRun("the summary's", m[1], before, after)
}
