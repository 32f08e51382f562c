package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// TestLivenessCheckKeptByAcksChecksAgain: a liveness check that the
// peer's acknowledgements kept (a large request still being taken in)
// goes on checking by itself. A call times out on a provider that holds
// it, the check's ping queues behind a 4 MB request crossing a 1 MB/s
// link; the path black-holes while that ping waits, after the link took
// in more of the request. The first wait is forgiven for those
// acknowledgements; no other call times out SERVER_TIMEOUT (on tcp the
// calls behind the large request are never sent), yet the channel closes
// when the check's next ping gets neither an answer nor an
// acknowledgement. It stayed open (until the heartbeat, minutes later)
// when the check ended with its first ping: a CI run under load saw
// TestT24_BlackHoleDuringLargeWriteClosed/tcp open 15 s later.
//
// The path black-holes while the first ping waits, not once it was
// forgiven: on smux the ping is not behind the large request's stream but
// only behind the bytes already in the sockets (about 1.1 MB, 1.1 s of
// the link), so its late answer came back about 1.2 s after it was sent;
// with the black hole then (1.2 s after the first ping) the answer won
// the race in 12 runs of 20 under two busy loops, and the check rightly
// ended on it (the provider was alive when it answered), leaving the
// black hole to the heartbeat.
func TestLivenessCheckKeptByAcksChecksAgain(t *testing.T) {
	t.Parallel()
	holding := func(o *exchange.Options) {
		o.Handler = exchange.HandlerFunc(func(ctx context.Context, req *exchange.Request) spi.Result {
			if req.Method == "Hold" {
				time.Sleep(5 * time.Second) // deaf to its deadline: no late answer arrives before the black hole
				return spi.Result{Value: "late"}
			}
			return payload(ctx, req)
		})
	}
	// the held call's timeout; its liveness ping waits max(1s, it). 2 s,
	// not 1 s: under load (-race, two busy loops beside a nice 15 test)
	// the 4 MB request could take longer than the 900 ms it had to be
	// queued in, and the test failed before it looked at the check. The
	// black hole (about 2.3 s) still comes before Hold's late answer (5 s).
	const heldFor = 2 * time.Second
	for _, tname := range []string{tcp.Name, smux.Name} {
		t.Run(tname, func(t *testing.T) {
			t.Parallel()
			// The scenario needs the large request queued before the held
			// call times out; a run whose process did not get the CPU for
			// that long (1.9 s) sets it up again, on a new connection, at
			// most setups times.
			const setups = 3
			for i := 1; ; i++ {
				if livenessKeptByAcks(t, tname, holding, heldFor) {
					return
				}
				if i == setups {
					t.Fatalf("the large request was not queued before the held call timed out in %d setups", setups)
				}
			}
		})
	}
}

// livenessKeptByAcks runs TestLivenessCheckKeptByAcksChecksAgain's
// scenario once on a new pair, reporting false (and failing nothing) when
// the large request was not queued before the held call timed out.
func livenessKeptByAcks(t *testing.T, tname string, holding func(*exchange.Options), heldFor time.Duration) bool {
	c, _, px := slowPair(t, tname, "heartbeat=idle", holding)
	px.SetRate(slowRate, 0)
	lag := startLagMeter(t)
	start := time.Now()
	held := make(chan error, 1) // the held call's timer runs from after start
	go func() {
		inv := &spi.Invocation{Service: "demo.Echo", Method: "Hold"}
		held <- c.ch.Invoke(context.Background(), jsonCodec{}, inv, heldFor).Err
	}()
	time.Sleep(50 * time.Millisecond) // sent before the large request
	// 4 MB: 4 s of the 1 MB/s link, past the black hole (about 2.3 s)
	large := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{jsonString(strings.Repeat("z", 4_000_000))}}
	go c.ch.Invoke(context.Background(), jsonCodec{}, large, time.Minute)
	// The large request must be queued before the held call times
	// out, so that the check's ping waits behind it. Its argument
	// is encoded already (encodedJSON): encoding 4 MB of JSON took
	// 1.2-3.3 s under -race at load 15 (two busy loops beside
	// other tests), over the 1.9 s it had, in 7 runs of 10 (the
	// check's ping then went first and was answered); copying it
	// takes milliseconds.
	// Two pending seen less than heldFor after start are the held call
	// and the large request: the held call's timer cannot have fired yet
	// (later, two are the large request and the check's ping, seen when
	// a stalled process looked once after its deadline).
	var seen time.Time
	if !waitCond(heldFor, func() bool {
		two := c.ch.Pending() == 2
		seen = time.Now()
		return two
	}) || seen.Sub(start) >= heldFor {
		t.Logf("the large request was not seen queued before the held call's %v timeout (goroutines woke up to %v late): setting up again",
			heldFor, lag.max().Round(time.Millisecond))
		return false
	}
	t.Logf("large request queued %v after the start", seen.Sub(start).Round(time.Millisecond))
	if st := spi.StatusOf(<-held); st != spi.StatusServerTimeout {
		t.Fatalf("held call: %v, want SERVER_TIMEOUT", st)
	}
	// the held call's timeout started the check: its ping is
	// pending beside the large request
	if !waitCond(2*time.Second, func() bool { return c.ch.Pending() == 2 }) {
		t.Fatalf("no liveness check's ping pending 2 s after the held call timed out (pending: %d)", c.ch.Pending())
	}
	pinged := time.Now()
	// the link takes in more of the large request, then drops
	// everything: the ping (behind 1 MB or more) never arrives
	time.Sleep(300 * time.Millisecond)
	px.BlackHole()
	holed := time.Since(start)
	// the first wait (2 s) passes without an answer but with
	// acknowledgements: the channel stays and the check pings again
	time.Sleep(time.Until(pinged.Add(heldFor + 200*time.Millisecond)))
	if r := c.ch.Reason(); r != "" {
		t.Fatalf("closed at the first ping's verdict, though the link took in more of the large request while it waited: %s", r)
	}
	// 8 s, and 3 timers (the first ping's wait, the second's, the
	// verdict's close) each as late as the goroutines woke
	r, ok := waitReasonLagging(c.closed, 8*time.Second, lag, 3)
	if !ok {
		t.Fatalf("black-holed %v ago with a liveness check kept by acknowledgements, and still open (goroutines woke up to %v late)",
			(time.Since(start) - holed).Round(time.Millisecond), lag.max().Round(time.Millisecond))
	}
	took := time.Since(start)
	t.Logf("closed %v after the start (black hole at %v, the check's first ping at %v): %s", took.Round(time.Millisecond), holed.Round(time.Millisecond), pinged.Sub(start).Round(time.Millisecond), r)
	if !strings.Contains(r, "liveness check") {
		t.Errorf("closed by %q, want the liveness check", r)
	}
	return true
}

// waitCond polls cond every 5 ms for at most max.
func waitCond(max time.Duration, cond func() bool) bool {
	for end := time.Now().Add(max); ; time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(end) {
			return false
		}
	}
}
