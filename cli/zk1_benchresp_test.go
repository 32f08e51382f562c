package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nu43 finding 7: a --resp over what the demo's Payload answers (the
// provider's payload limit less its response framing) was sent, and every
// call failed BAD_REQUEST; it is refused up front, as --req is, in the
// same words. The largest --resp still runs.
func TestBenchRespOverPayloadLimitIsRefusedUpFront(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	for _, resp := range []string{"8MiB", "8388593"} {
		r := benchResult(t, p.url("demo.Echo"), "-n", "2", "--resp", resp, "--json")
		var o benchFailure
		if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
			t.Fatalf("--resp %s --json: stdout %q: %v (stderr %q)", resp, r.stdout, err, r.stderr)
		}
		if r.code != 1 || !strings.HasPrefix(o.Error, "bench: --resp ") || !strings.Contains(o.Error, ": over the payload limit 8 MiB of "+p.addr+" (URL key payload, default 8MiB): want 0 to 8388592 bytes") ||
			!strings.Contains(o.Error, "raise the limit on both sides") || r.elapsed > 10*time.Second {
			t.Fatalf("--resp %s: exit %d after %v, stdout %q, stderr %q; want exit 1 at once, refused up front", resp, r.code, r.elapsed, r.stdout, r.stderr)
		}
	}
	r := benchResult(t, p.url("demo.Echo"), "-n", "1", "--resp", "8MiB")
	if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "airnode: bench: --resp 8388608: over the payload limit 8 MiB of ") {
		t.Fatalf("text: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	rep := benchJSON(t, nil, p.url("demo.Echo"), "-n", "2", "--warmup", "0", "--resp", "8388592")
	if rep.OK != 2 {
		t.Fatalf("--resp 8388592, the largest the provider answers: %+v", rep)
	}
}

// tester101 #3: under json the demo's bytes travel as base64, a third
// more, so --resp 7000000 passed the check against the demo's bound
// (8 MiB less 16) and every call failed BAD_RESPONSE (response body
// 9333340 bytes over the limit). The check sizes the answer with the
// calls' codec: refused up front naming the largest --resp json fits,
// and that one runs.
func TestBenchRespSizedWithTheCallsCodec(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	u := p.url("demo.Echo") + "?codec=json"
	r := benchResult(t, u, "-n", "2", "--resp", "7000000")
	const want = ": over the payload limit 8 MiB of "
	if r.code != 1 || !strings.HasPrefix(r.stderr, "airnode: bench: --resp 7000000"+want) || !strings.Contains(r.stderr, "with codec json") || r.elapsed > 10*time.Second {
		t.Fatalf("json --resp 7000000: exit %d after %v, stderr %q; want exit 1 at once, refused up front naming codec json", r.code, r.elapsed, r.stderr)
	}
	var most int
	if _, err := fmt.Sscanf(r.stderr[strings.Index(r.stderr, "want 0 to "):], "want 0 to %d bytes", &most); err != nil || most < 6_000_000 || most > 6_291_456 {
		t.Fatalf("json: largest --resp %d (%v) from %q; want about 6 MiB (8 MiB x 3/4)", most, err, r.stderr)
	}
	rep := benchJSON(t, nil, u, "-n", "2", "--warmup", "0", "--resp", strconv.Itoa(most))
	if rep.OK != 2 {
		t.Fatalf("json --resp %d, the largest the check allows: %+v", most, rep)
	}
	if r := benchResult(t, u, "-n", "1", "--resp", strconv.Itoa(most+1)); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("json --resp %d: exit %d, stderr %q; want refused", most+1, r.code, r.stderr)
	}
}
