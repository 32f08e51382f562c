package cli

import (
	"encoding/json"
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
