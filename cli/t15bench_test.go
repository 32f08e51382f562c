package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// reqMost reads the largest --req a refusal names ("want 0 to N bytes").
func reqMost(t *testing.T, msg string) int {
	t.Helper()
	m := regexp.MustCompile(`want 0 to (\d+) bytes`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("refusal %q names no largest --req", msg)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// benchRefusal runs bench with args and --json and returns the error of
// the JSON object it printed, failing unless it exited 1 with one.
func benchRefusal(t *testing.T, args ...string) string {
	t.Helper()
	r := benchResult(t, append(args, "--json")...)
	var o benchFailure
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil || r.code != 1 || o.Error == "" {
		t.Fatalf("bench %v: exit %d, stdout %q (%v), stderr %q; want exit 1 and a JSON error object", args, r.code, r.stdout, err, r.stderr)
	}
	if strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("bench %v crashed: %s", args, r.stderr)
	}
	return o.Error
}

// TestT15C_ReqLimitIsExact (tester15 finding C): the largest --req bench
// accepts is the provider's payload limit less what the request body
// holds besides the payload (the preamble and the codec's framing: 24
// bytes for demo.Echo under msgpack with bench's 10 s timeout), not the
// limit itself (8388585 to 8388608 passed the old check and failed every
// call with SERIALIZATION_ERROR). At that largest --req every call
// answers; one byte more is refused before the run, naming it. The same
// holds under json (base64: a third more) and for a case whose --resp
// differs (the padding rides in an attachment).
func TestT15C_ReqLimitIsExact(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	u := p.url("demo.Echo")
	for _, c := range []struct {
		name string
		args []string
		want int // 0: whatever the refusal names
	}{
		{"msgpack", nil, 8<<20 - 24},
		{"json", []string{"--codec", "json"}, 0},
		{"padded", []string{"--resp", "10"}, 0},
	} {
		most := reqMost(t, benchRefusal(t, append([]string{u, "-n", "2", "--warmup", "0", "--req", strconv.Itoa(8 << 20)}, c.args...)...))
		if c.want != 0 && most != c.want {
			t.Errorf("%s: largest --req %d, want %d", c.name, most, c.want)
		}
		rep := benchJSON(t, nil, append([]string{u, "-n", "2", "--warmup", "0", "--req", strconv.Itoa(most)}, c.args...)...)
		if rep.OK != 2 || len(rep.Errors) != 0 {
			t.Errorf("%s: --req %d (the largest named): %d of 2 calls answered, errors %v", c.name, most, rep.OK, rep.Errors)
		}
		msg := benchRefusal(t, append([]string{u, "-n", "2", "--warmup", "0", "--req", strconv.Itoa(most + 1)}, c.args...)...)
		if !strings.HasPrefix(msg, "bench: --req "+strconv.Itoa(most+1)+": over the payload limit 8 MiB of "+p.addr) || reqMost(t, msg) != most {
			t.Errorf("%s: --req %d refused with %q, want the limit and the largest --req %d", c.name, most+1, msg, most)
		}
	}
}

// TestT15B_HugeReqWithRaisedPayloadRefused (tester15 finding B): with -p
// payload raised, as the refusal of a large --req advises, a --req the
// machine cannot hold is still refused before bench allocates it, with a
// JSON object under --json (it ran out of memory and printed no JSON):
// over the frame's 4-byte length (protocol.MaxPayload, whatever payload
// says), and, under an address-space limit (ulimit -v 4000000), over a
// quarter of it.
func TestT15B_HugeReqWithRaisedPayloadRefused(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	u := p.url("demo.Echo")
	start := time.Now()
	msg := benchRefusal(t, u, "-n", "2", "--req", "100000000000", "-p", "payload=200GiB")
	if !strings.Contains(msg, "over the payload limit 4294967295 bytes of "+p.addr) || reqMost(t, msg) != 1<<32-1-24 ||
		!strings.Contains(msg, "4-byte length") {
		t.Errorf("--req 100000000000 with payload=200GiB refused with %q, want the frame's cap and the largest --req", msg)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("refused after %v, want at once", d)
	}

	// Under ulimit -v 4000000 (KiB) a quarter of it, 1024000000 bytes.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -v 4000000 && exec "$0" "$@"`, binary,
		"bench", u, "-n", "2", "--req", "3000000000", "-p", "payload=4GiB", "--json")
	out, err := cmd.Output()
	var o benchFailure
	if jerr := json.Unmarshal(out, &o); jerr != nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("under ulimit -v: exit %v, stdout %q (%v); want exit 1 and a JSON error object", err, out, jerr)
	}
	if !strings.HasPrefix(o.Error, "bench: --req 3000000000: more than this machine can hold for a run: want at most 1024000000 bytes") ||
		!strings.Contains(o.Error, "ulimit -v") {
		t.Errorf("under ulimit -v: %q, want the address-space bound", o.Error)
	}
}
