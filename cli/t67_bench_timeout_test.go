package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// tester67 #1: a SIGSTOP timeline at bench's defaults showed 0 calls for 9
// s, the callers parked on the stalled provider for bench's 10 s timeout,
// ten times a consumer's 1 s, and nothing in the report said so. The
// report (text and --json) now states the calls' timeout and where it
// came from: --timeout, the URL key (service- or method-level), or bench's
// default.
func TestT67_1_BenchReportsItsCallTimeout(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	cfg := writeConfig(t, "references:\n  - interface: demo.Echo\n    params: {methods.Echo.timeout: 750ms}\n")
	for _, tc := range []struct {
		args     []string
		ms       int64
		from     string
		wantText string
	}{
		{[]string{p.url("demo.Echo")}, 10000, "default", "timeout     10s per call (bench's default; a consumer's is 1s: --timeout 1s"},
		{[]string{p.url("demo.Echo"), "--timeout", "1500ms"}, 1500, "--timeout", "timeout     1.5s per call (--timeout)"},
		{[]string{p.url("demo.Echo?timeout=2000")}, 2000, "url", "timeout     2s per call (URL key timeout, from SERVICE_URL)"},
		{[]string{"--config", cfg, p.url("demo.Echo")}, 750, "url methods.Echo.timeout", "timeout     750ms per call (URL key methods.Echo.timeout, from config references[0].params)"},
	} {
		args := append(tc.args, "-n", "50", "--warmup", "0")
		out := benchRun(t, nil, append(args, "--json")...)
		var got struct {
			MS   *int64  `json:"call_timeout_ms"`
			From *string `json:"call_timeout_from"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.MS == nil || got.From == nil || *got.MS != tc.ms || *got.From != tc.from {
			t.Errorf("bench %v --json: call_timeout_ms/from %v/%v; want %d/%q\n%s", tc.args, got.MS, got.From, tc.ms, tc.from, out)
		}
		if text := benchRun(t, nil, args...); !strings.Contains(text, tc.wantText) {
			t.Errorf("bench %v: summary lacks %q:\n%s", tc.args, tc.wantText, text)
		}
	}
}
