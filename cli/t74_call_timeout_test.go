package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// tester74 #3, #4: a timeout the URL sets (-p timeout=, a method-level
// form, SERVICE_URL's ?timeout=) is each attempt's, as in Dubbo and in
// the kernel everywhere else; only --timeout bounds the whole command.
// -p timeout=300ms with idempotent=true against a method sleeping 1 s
// made one attempt in 0.3 s (the URL key bounded the call with its
// retries); it makes 3 now. A method-level Sleep.timeout=200 no longer
// becomes the command's budget whose error names a --timeout nobody gave.
func TestT74_URLTimeoutIsEachAttempts(t *testing.T) {
	t.Parallel()
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := call(t, nil, "-p", "timeout=300ms", "-p", "idempotent=true", p.url("demo.Echo"), "Sleep", "1000")
	t.Logf("-p timeout=300ms, idempotent: %v: %s", r.elapsed, r.stderr)
	failsWith(t, r, "SERVER_TIMEOUT", "failed after 3 attempts")
	if r.elapsed < 850*time.Millisecond {
		t.Errorf("call took %v; want 3 attempts of 300 ms", r.elapsed)
	}
	r = call(t, nil, p.url("demo.Echo")+"?Sleep.timeout=200&timeout=1000", "Sleep", "500")
	// either clock may fire first: the consumer's timer ("call
	// demo.Echo.Sleep to ADDR timed out after 201ms waiting for the
	// response") or the provider's deadline ("call demo.Echo.Sleep timed
	// out after 200ms on the provider (...)"), worded alike (tester75 #3)
	failsWith(t, r, "SERVER_TIMEOUT")
	if !regexp.MustCompile(`^SERVER_TIMEOUT: exchange: call demo\.Echo\.Sleep (to \S+ )?timed out after 2\d\d(\.\d+)?ms (waiting for the response|on the provider)`).MatchString(r.stderr) {
		t.Errorf("Sleep.timeout=200: %q names neither 200 ms timeout", r.stderr)
	}
	if strings.Contains(r.stderr, "--timeout") {
		t.Errorf("a method-level timeout's failure names --timeout, which was not given: %q", r.stderr)
	}
	// --timeout still bounds the whole command, retries included
	r = call(t, nil, "--timeout", "300ms", "-p", "idempotent=true", p.url("demo.Echo"), "Sleep", "1000")
	failsWith(t, r, "SERVER_TIMEOUT")
	if strings.Contains(r.stderr, "attempts") || r.elapsed > 1500*time.Millisecond {
		t.Errorf("--timeout 300ms: %v, %q; want one attempt within about 300 ms", r.elapsed, r.stderr)
	}
}
