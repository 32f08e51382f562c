package cli

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel"
)

// tester86 #3: serve's "calls abandoned" record named each abandoned call
// once, so 13 Sleep calls from one consumer read "demo.Echo.Sleep from
// 127.0.0.1:42734, demo.Echo.Sleep from 127.0.0.1:42734, ..." (8 times,
// the rest unnamed). It counts them per method and consumer now:
// "demo.Echo.Sleep from 127.0.0.1:42734 x13", a single call without a
// count, the record's other attributes as before.
func TestBI_AbandonedCallsCountedPerMethodAndConsumer(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-wait", "0", "--shutdown-timeout", "1s", "--metrics", "127.0.0.1:0")
	u := p.url("demo.Echo") + "?timeout=20s&cluster=failfast"
	many, one := refer(t, u), refer(t, u)
	const n = 13
	done := make(chan error, n+1)
	sleep := func(r *kernel.Reference) {
		var v int
		done <- r.Call(context.Background(), "Sleep", []any{10000}, &v)
	}
	for range n {
		go sleep(many)
	}
	go sleep(one)
	waitProbe(t, metricsAddr(t, p), "/metrics", http.StatusOK, `airnode_calls_in_flight{method="Sleep",service="demo.Echo",side="provider"} 14`, 10*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 1 {
		t.Errorf("serve exited %d, want 1 (calls abandoned)", code)
	}
	for range n + 1 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "abandoned") {
				t.Errorf("Sleep call = %v; want SERVER_ERROR ... abandoned", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a Sleep call did not end within 10s of serve's exit")
		}
	}
	lines := strings.Split(strings.TrimSpace(p.logText()), "\n")
	last := lines[len(lines)-1]
	want := regexp.MustCompile(`^time=\S+ level=ERROR msg="airnode serve: shutdown timeout exceeded; calls abandoned" timeout=1s calls=14 ` +
		`abandoned="(demo\.Echo\.Sleep from 127\.0\.0\.1:\d+(?: x13)?), (demo\.Echo\.Sleep from 127\.0\.0\.1:\d+(?: x13)?)" answered=SERVER_ERROR component=cli command=serve$`)
	m := want.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("serve's last line:\n%s\nwant it to match %s", last, want)
	}
	if counted := strings.HasSuffix(m[1], " x13"); counted == strings.HasSuffix(m[2], " x13") {
		t.Errorf("abandoned=%q, %q; want one consumer's 13 calls as one entry with x13 and the other's one call without a count", m[1], m[2])
	}
}
