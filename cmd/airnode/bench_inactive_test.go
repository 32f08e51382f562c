package main

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// A provider killed mid-run fails the calls that were in flight on it
// after their requests were sent (the provider may have run them) and the
// later calls before theirs were (safe to retry): bench's --json errors
// and its summary show the two apart, as "CHANNEL_INACTIVE (sent)" and
// "CHANNEL_INACTIVE (not sent)", never as one CHANNEL_INACTIVE.
func TestBench_ChannelInactiveSentAndNotSentApart(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	go func() {
		time.Sleep(2 * time.Second) // start-up, warm-up, then about 1 s measured
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}()
	// 20 callers keep about 20 requests in flight: those are sent when
	// the provider dies.
	r := benchJSON(t, nil, p.url("demo.Echo")+"?reconnect.backoff=50ms", "--duration", "3500ms", "-c", "20", "--warmup", "100", "--timeout", "2s")
	t.Logf("errors %v; first error %s", r.Errors, r.FirstError)
	if r.OK == 0 || r.Errors[channelInactiveSent] == 0 || r.Errors[channelInactiveNotSent] == 0 {
		t.Fatalf("errors %v: want both %q and %q", r.Errors, channelInactiveSent, channelInactiveNotSent)
	}
	if n, ok := r.Errors[spi.StatusChannelInactive.String()]; ok {
		t.Fatalf("errors %v: %d calls under the bare CHANNEL_INACTIVE", r.Errors, n)
	}
	var out bytes.Buffer
	printOutcome(&out, "demo.Echo", benchOutcome{Report: r, Case: &benchCase{Req: 100, Resp: 100, Concurrency: 20}}, benchFlags{connections: 1})
	for _, want := range []string{
		fmt.Sprintf("%s %d", channelInactiveSent, r.Errors[channelInactiveSent]),
		fmt.Sprintf("%s %d", channelInactiveNotSent, r.Errors[channelInactiveNotSent]),
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}

// benchStatus keeps every status name but CHANNEL_INACTIVE's, which it
// splits by spi.ErrRequestSent, however deep in the chain.
func TestBenchStatusNames(t *testing.T) {
	sent := spi.Errorf(spi.StatusChannelInactive, "exchange: channel closed (after its request was sent): %w", spi.ErrRequestSent)
	for _, c := range []struct {
		err  error
		want string
	}{
		{spi.Errorf(spi.StatusServerTimeout, "late"), "SERVER_TIMEOUT"},
		{fmt.Errorf("failover: %w", sent), channelInactiveSent},
		{spi.Errorf(spi.StatusChannelInactive, "connection refused"), channelInactiveNotSent},
		{fmt.Errorf("plain"), "CLIENT_ERROR"},
	} {
		if got := benchStatus(c.err); got != c.want {
			t.Errorf("benchStatus(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
