package kernel

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// A consumer whose heartbeat.interval (500ms) is under its provider's
// heartbeat.min.ping.interval (1s by default) pings every 1 s: the close
// reason when the provider hangs names that interval, not only retries and
// ping.timeout, and the "below the provider's" warning is logged once per
// provider address in the process, not again on the reconnect (nu40
// finding 6). Detection is interval + (retries−1) × interval + ping.timeout
// = 2.5 s from the hang (2.48-2.49 s measured by the user).
func TestStretchedIntervalNamedAndWarnedOnce(t *testing.T) {
	var clogs logbuf.Buffer
	p := NewNode(testCatalogs(t), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	px := testproxy.New(t, e.URL().Address())
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&clogs, nil))))
	t.Cleanup(func() { _ = c.Close() })
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+px.Addr()+"/demo.Echo?heartbeat=idle&heartbeat.interval=500ms&heartbeat.retries=2"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	px.Pause(true) // the provider looks hung
	hung := time.Now()
	const closed = "pings to " // "2 pings to ADDR failed in a row"
	for !strings.Contains(clogs.String(), closed) {
		if time.Since(hung) > 10*time.Second {
			t.Fatalf("no heartbeat close in 10 s:\n%s", clogs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(hung)
	t.Logf("closed %v after the hang", took.Round(time.Millisecond))
	if took < 1500*time.Millisecond || took > 6*time.Second {
		t.Errorf("closed %v after the hang, want about 2.5 s (within [1.5 s, 6 s])", took)
	}
	const named = "pinging every 1s, the provider's heartbeat.min.ping.interval, not heartbeat.interval 500ms; heartbeat.retries 2, heartbeat.ping.timeout 500ms"
	if !strings.Contains(clogs.String(), named) {
		t.Errorf("close reason does not name the interval used (%q):\n%s", named, clogs.String())
	}
	px.Pause(false)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(clogs.String(), "reconnected to provider") {
		if time.Now().After(deadline) {
			t.Fatalf("no reconnect in 10 s:\n%s", clogs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", 2); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(clogs.String(), "below the provider's heartbeat.min.ping.interval"); n != 1 {
		t.Errorf("the min.ping.interval warning was logged %d times over a reconnect, want once:\n%s", n, clogs.String())
	}
}

// A heartbeat=none consumer sends nothing on an idle connection, so an idle
// provider closes it after its heartbeat.timeout and the consumer redials
// (nu40 finding 2). That close is expected: both sides log it at INFO, the
// provider saying the consumer runs none, the consumer that the provider
// closed an idle connection, and neither logs a WARN.
func TestNoneConsumerIdleCloseIsInfo(t *testing.T) {
	plogs, clogs, r := loggedEchoPair(t, "heartbeat.interval=500ms&heartbeat.timeout=1s", "heartbeat=none")
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for !strings.Contains(clogs.String(), "reconnected to provider") {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the idle none connection was not closed and redialled in 10 s:\nprovider:\n%s\nconsumer:\n%s", plogs.String(), clogs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("closed and redialled %v after the call", time.Since(start).Round(time.Millisecond))
	if _, err := r.Invoke(ctxT(t), "Echo", 2); err != nil {
		t.Fatal(err)
	}
	pl, cl := plogs.String(), clogs.String()
	if !strings.Contains(pl, `level=INFO msg="channel closed"`) || !strings.Contains(pl, "the consumer runs heartbeat=none") {
		t.Errorf("provider's close is not an INFO naming heartbeat=none:\n%s", pl)
	}
	if !strings.Contains(cl, `level=INFO msg="channel closed; reconnecting"`) || !strings.Contains(cl, "the provider closed an idle connection") {
		t.Errorf("consumer's close is not an INFO saying the provider closed an idle connection:\n%s", cl)
	}
	if !strings.Contains(cl, "closed by peer (the provider's reason: heartbeat idle: nothing read from or written to") {
		t.Errorf("consumer's close does not give the provider's reason (its close-reason event):\n%s", cl)
	}
	// The one WARN is the strategy mismatch, once per peer, saying what
	// happens.
	for side, l := range map[string]string{"provider": pl, "consumer": cl} {
		if n, m := strings.Count(l, "level=WARN"), strings.Count(l, "closes the none consumer's connection after its own heartbeat.timeout"); n != 1 || m != 1 {
			t.Errorf("%s logged %d WARNs, %d of them the mismatch saying the provider closes the none consumer's connection; want that one only:\n%s", side, n, m, l)
		}
	}
}

// Keys the chosen heartbeat strategy does not read get one warning at
// Refer and at Export, as a key only another cluster or balancer reads
// does (nu40 finding 7): an SRE moving from idle to dual who leaves
// heartbeat.retries in place is told.
func TestHeartbeatKeysTheStrategyIgnoresWarnOnce(t *testing.T) {
	cases := map[string]string{
		"heartbeat=dual&heartbeat.retries=5":             "key=heartbeat.retries heartbeat=dual read_by=idle",
		"heartbeat=dual&heartbeat.ping.timeout=5s":       "key=heartbeat.ping.timeout heartbeat=dual read_by=idle",
		"heartbeat=none&heartbeat.interval=5s":           "key=heartbeat.interval heartbeat=none read_by=dual,idle",
		"heartbeat=idle&heartbeat.retries=5":             "",
		"heartbeat=3000&heartbeat.retries=5":             "", // the bare form is idle
		"heartbeat=dual&heartbeat.timeout=5m":            "",
		"heartbeat=none&heartbeat.ping.on.timeout=false": "",
	}
	check := func(t *testing.T, side, q, want, log string) {
		t.Helper()
		lines := strings.Count(log, "URL key is read by another heartbeat strategy")
		switch {
		case want == "" && lines != 0:
			t.Errorf("%s %s: warned, want no warning:\n%s", side, q, log)
		case want != "" && (lines != 1 || !strings.Contains(log, " service=demo.Echo "+want+"\n")):
			t.Errorf("%s %s: want one warning with %q, got:\n%s", side, q, want, log)
		}
	}
	for q, want := range cases {
		var log logbuf.Buffer
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithShutdownWait(0))
		r, err := n.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/demo.Echo?"+q), spi.URL{})
		if err != nil {
			t.Fatalf("refer %s: %v", q, err)
		}
		_ = r.Close()
		_ = n.Close()
		check(t, "Refer", q, want, log.String())
		var elog logbuf.Buffer
		n = NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&elog, nil))), WithShutdownWait(0))
		if _, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q)); err != nil {
			t.Fatalf("export %s: %v", q, err)
		}
		check(t, "Export", q, want, elog.String())
		_ = n.Close()
	}
}
