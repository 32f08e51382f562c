package failover_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/clustertest"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// An idempotent call whose first attempt was sent and timed out
// (SERVER_TIMEOUT) and whose retries were never sent fails with the sent
// attempt's SERVER_TIMEOUT, never with the retries' "not sent" status:
// CLIENT_TIMEOUT says the request was withdrawn, and code that resends on
// it would run the write twice. One provider behind a loopback proxy,
// timeout=1s: Work(5000) reaches it, then the proxy pauses and three
// 7 MiB Put requests fill the buffers between the consumer and the proxy,
// so the retries wait in the consumer's queue until withdrawn
// (CLIENT_TIMEOUT "withdrawn, never sent", with
// heartbeat.ping.on.timeout=false) or until the liveness check closes the
// silent connection (by default; CHANNEL_INACTIVE before sending). The
// call failed CLIENT_TIMEOUT, or CHANNEL_INACTIVE, "failed after 3
// attempts on [P (3 times)]" before.
//
// The jam must be queued before Work's first attempt times out: a retry
// queued before it is written and reaches the provider once the proxy
// resumes. Under -race on a loaded machine, with 1 s, it was not in 5 of
// 10 runs (the process starved for over a second at times), so Work and
// its retries have 3 s (methods.Work.timeout), and the Puts, which must
// stay queued until the call ends, 60 s.
func TestDub3_UnsentRetryDoesNotHideTheSentAttempt(t *testing.T) {
	for _, tc := range []struct{ query, unsent string }{
		// regular expressions; ADDR is the proxy's address
		{"heartbeat.ping.on.timeout=false", `CLIENT_TIMEOUT: exchange: call t\.Svc\.Work to ADDR timed out after TOOK before the request was written \(withdrawn, never sent\)STALLED$`},
		// the liveness check's CHANNEL_INACTIVE (or "channel closed,
		// reconnecting"); on a loaded machine the last retry's own
		// timeout can end it first, withdrawn (a CI run at load 6.5)
		{"", `(CHANNEL_INACTIVE: .*|CLIENT_TIMEOUT: exchange: call t\.Svc\.Work to ADDR timed out after TOOK before the request was written \(withdrawn, never sent\)STALLED)$`},
	} {
		a := &clustertest.Svc{}
		_, addrs := clustertest.Start(t, "", a)
		px := testproxy.New(t, addrs[0])
		ref := clustertest.Direct(t, "idempotent=true&timeout=1s&methods.Work.timeout=3s&methods.Put.timeout=60s&outlier.consecutive=0&"+tc.query, px.Addr())
		if _, err := ref.Invoke(context.Background(), "Who"); err != nil { // connected
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := ref.Invoke(context.Background(), "Work", 5000)
			done <- err
		}()
		for a.Runs() < 2 { // Who, then Work: its request reached the provider
			time.Sleep(time.Millisecond)
		}
		px.Pause(true)
		jam, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() { ref.Invoke(jam, "Put", make([]byte, 7<<20)) })
		}
		err := <-done
		stop()
		px.Pause(false)
		wg.Wait()
		if spi.StatusOf(err) != spi.StatusServerTimeout || errors.Is(err, spi.ErrClientTimeout) {
			t.Fatalf("%q: got %v\nwant the sent attempt's SERVER_TIMEOUT", tc.query, err)
		}
		addr := regexp.QuoteMeta(px.Addr())
		// 3 s or more, with the exchange's note when its timer fired
		// late; one line per attempt, without the service and method
		// (tester75 #2); then the kernel's word on the bound that ended
		// it (tester98 #1)
		took, stalled := `(3|[3-9]\.\d+|\d\d+\.?\d*)s`, `(; but its 3s timer fired [^;]* late: [^;]*)? \(ended by the URL key methods\.Work\.timeout=3s per attempt, the caller's ctx has no deadline: [^\n]*\)`
		unsent := strings.NewReplacer(`call t\.Svc\.Work to ADDR `, "", "ADDR", addr, "TOOK", took, "STALLED", stalled).Replace(tc.unsent)
		want := regexp.MustCompile(`^SERVER_TIMEOUT: failover: t\.Svc\.Work failed after 3 attempts on \[` + addr + ` \(3 times\)\]; ` +
			`the status is attempt 1's, the last that may have run \(the 2 attempts after it did not run\):\n` +
			`  attempt 1, ` + addr + `: SERVER_TIMEOUT: exchange: timed out after ` + took + ` waiting for the response` + stalled + `\n` +
			`  attempt 2, ` + addr + `: .*\n` +
			`  attempt 3, ` + addr + `: ` + unsent)
		if !want.MatchString(err.Error()) || strings.Contains(err.Error(), "the provider may have run it") {
			t.Errorf("%q: message\n%s\nwant it to match %s", tc.query, err, want)
		}
		if n := clustertest.Settle(2, a); n != 2 {
			t.Errorf("%q: the provider ran %d calls, want 2 (Who, and Work once)", tc.query, n)
		}
	}
}

// A later provider's SERVICE_NOT_FOUND ("the call did not run") does not
// hide an earlier attempt that may have run: Work(1000) times out on A
// (SERVER_TIMEOUT, idempotent), and B, which does not serve t.Svc,
// answers SERVICE_NOT_FOUND. Whichever provider is asked first, the call
// fails SERVER_TIMEOUT. It failed SERVICE_NOT_FOUND "failed after 2
// attempts on [A, B]" when A was asked first.
func TestDub3_NotFoundElsewhereDoesNotHideTheSentAttempt(t *testing.T) {
	// The first pick is the directory's first provider by address, so
	// which is asked first is the ports' draw, whatever the URL's order:
	// call until both orders have been seen (at least 6 calls, at most
	// 20; all 6 fell on B first in about 1 run in 10 before).
	aFirst, bFirst := 0, 0
	for i := 0; i < 20 && (i < 6 || aFirst == 0 || bFirst == 0); i++ {
		a := &clustertest.Svc{}
		_, addrs := clustertest.Start(t, "", a)
		b := clustertest.Elsewhere(t, &clustertest.Svc{})
		order := []string{addrs[0], b}
		if i%2 == 1 {
			order = []string{b, addrs[0]}
		}
		ref := clustertest.Direct(t, "idempotent=true&timeout=200ms&retries=1&outlier.consecutive=0&loadbalance=roundrobin", order...)
		_, err := ref.Invoke(context.Background(), "Work", 1000)
		if spi.StatusOf(err) != spi.StatusServerTimeout || !strings.Contains(err.Error(), "failed after 2 attempts on [") {
			t.Fatalf("call %d (%v): got %v\nwant A's SERVER_TIMEOUT after 2 attempts", i+1, order, err)
		}
		if strings.Contains(err.Error(), "the status is attempt 1's") && strings.Contains(err.Error(), ": SERVICE_NOT_FOUND: ") {
			aFirst++
		} else {
			bFirst++
		}
		if n := clustertest.Settle(1, a); n != 1 {
			t.Errorf("call %d: A ran %d calls, want 1", i+1, n)
		}
	}
	if aFirst == 0 {
		t.Errorf("A was never asked first: the case this test is for did not happen")
	}
}

// The rule, over every failure that certainly did not run, after a sent
// attempt and before it: what may have run stands, with the attempts
// after it that did not run counted in its message; a failure that may
// have run after one that did not is the call's, as it is.
func TestDub3_LastAttemptThatMayHaveRunStands(t *testing.T) {
	// short is an attempt's line: without "demo.Echo.Echo" and its
	// provider's address, which the first line names (tester75 #2)
	short := func(err error) string {
		return strings.NewReplacer("call demo.Echo.Echo to 10.0.0.1:20880 ", "", "call demo.Echo.Echo to 10.0.0.2:20880 ", "", "call demo.Echo.Echo ", "").Replace(err.Error())
	}
	timedOut := spi.Errorf(spi.StatusServerTimeout, "exchange: call demo.Echo.Echo to 10.0.0.1:20880 timed out after 200ms waiting for the response")
	sentInactive := &spi.Error{Status: spi.StatusChannelInactive, Message: "exchange: channel closed (this call's request had been sent when the channel closed: the provider may have run it)", Cause: spi.ErrRequestSent}
	notRun := map[string]error{
		"withdrawn":     spi.Errorf(spi.StatusClientTimeout, "exchange: call demo.Echo.Echo to 10.0.0.2:20880 timed out after 200ms before the request was written (withdrawn, never sent)"),
		"inactive":      spi.Errorf(spi.StatusChannelInactive, "exchange: channel to 10.0.0.2:20880 closed: reset"),
		"full pool":     spi.Errorf(spi.StatusServerThreadpoolExhausted, "threadlimit: refusing calls"),
		"not found":     spi.Errorf(spi.StatusServiceNotFound, "service demo.Echo not found"),
		"refused":       spi.Errorf(spi.StatusClientError, "dial: %w", syscall.ECONNREFUSED),
		"not connected": &spi.Error{Status: spi.StatusChannelInactive, Message: "kernel: cannot connect", Cause: spi.ErrNotConnected},
		"first connect": spi.Errorf(spi.StatusClientTimeout, "kernel: call demo.Echo.Echo timed out after 200ms waiting for a first connection to 10.0.0.2:20880: nothing was sent"),
		"encoding":      spi.Errorf(spi.StatusClientTimeout, "exchange: call demo.Echo.Echo to 10.0.0.2:20880 timed out after 200ms encoding its 4 MiB request (never sent)"),
	}
	for name, later := range notRun {
		for _, ran := range []error{timedOut, sentInactive} {
			c, dir, _ := setup(t, "?idempotent=true&retries=1", fails(ran), fails(later))
			r := c.Invoke(context.Background(), echo(), dir, firstLB{})
			if spi.StatusOf(r.Err) != spi.StatusOf(ran) || !errors.Is(r.Err, ran) {
				t.Errorf("%s after %s: got %v\nwant the sent attempt's %s", name, spi.StatusOf(ran), r.Err, spi.StatusOf(ran))
				continue
			}
			want := fmt.Sprintf("failover: demo.Echo.Echo failed after 2 attempts on [10.0.0.1:20880, 10.0.0.2:20880]; the status is attempt 1's, the last that may have run (the attempt after it did not run):\n"+
				"  attempt 1, 10.0.0.1:20880: %v\n  attempt 2, 10.0.0.2:20880: %v", short(ran), short(later))
			if !strings.Contains(r.Err.Error(), want) {
				t.Errorf("%s: message\n%s\nwant it to hold\n%s", name, r.Err, want)
			}
		}
		// the other way round: the one that may have run is the last
		c, dir, _ := setup(t, "?idempotent=true&retries=1", fails(later), fails(timedOut))
		r := c.Invoke(context.Background(), echo(), dir, firstLB{})
		if !errors.Is(r.Err, timedOut) || strings.Contains(r.Err.Error(), "did not run") {
			t.Errorf("SERVER_TIMEOUT after %s: got %v\nwant it as the call's, with no note", name, r.Err)
		}
	}
	// Attempts that did not run, then one that may have, then two that did not.
	full := notRun["full pool"]
	c, dir, ps := setup(t, "?idempotent=true&retries=3", fails(full), fails(timedOut), fails(full), fails(notRun["not found"]))
	r := c.Invoke(context.Background(), echo(), dir, firstLB{})
	want := fmt.Sprintf("failover: demo.Echo.Echo failed after 4 attempts on [10.0.0.1:20880, 10.0.0.2:20880, 10.0.0.3:20880, 10.0.0.4:20880]; the status is attempt 2's, the last that may have run (the 2 attempts after it did not run):\n"+
		"  attempt 1, 10.0.0.1:20880: %v\n  attempt 2, 10.0.0.2:20880: %v\n  attempt 3, 10.0.0.3:20880: %v\n  attempt 4, 10.0.0.4:20880: %v",
		full, strings.Replace(timedOut.Error(), "call demo.Echo.Echo ", "", 1), full, notRun["not found"]) // the stand-in's text names another address than its own
	if !errors.Is(r.Err, timedOut) || !strings.Contains(r.Err.Error(), want) {
		t.Errorf("got %v\nwant it to hold\n%s", r.Err, want)
	}
	if got := fmt.Sprint(calls(ps)); got != "[1 1 1 1]" {
		t.Errorf("calls %s, want [1 1 1 1]", got)
	}
	// Nothing ran: the last failure stands, as before.
	c, dir, _ = setup(t, "?idempotent=true&retries=1", fails(full), fails(notRun["withdrawn"]))
	if r := c.Invoke(context.Background(), echo(), dir, firstLB{}); !errors.Is(r.Err, notRun["withdrawn"]) || strings.Contains(r.Err.Error(), "did not run") {
		t.Errorf("nothing ran: got %v, want the last failure", r.Err)
	}
}
