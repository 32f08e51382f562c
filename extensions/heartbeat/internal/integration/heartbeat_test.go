package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testproxy"
)

// busy calls Echo every 100 ms until stop is called; stop waits.
func busy(t *testing.T, c *consumer) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			if err := call(c.ch); err != nil {
				t.Errorf("call on a healthy channel: %v", err)
				return
			}
			select {
			case <-quit:
				return
			case <-tk.C:
			}
		}
	}()
	return func() { close(quit); <-done }
}

// H1 / issue 4: a busy channel (a call every 100 ms, interval 1s) carries
// no heartbeat frame, for both strategies.
func TestH1_BusyChannelSendsNoHeartbeat(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"heartbeat=idle&heartbeat.interval=1s", "heartbeat=dual&heartbeat.interval=1s"} {
		t.Run(q, func(t *testing.T) {
			t.Parallel()
			p := startProvider(t, heartbeat(t, q))
			c := dial(t, p.addr, heartbeat(t, q))
			stop := busy(t, c)
			time.Sleep(3500 * time.Millisecond)
			stop()
			if c.wrote.pings.Load()+c.wrote.answers.Load()+p.wrote.pings.Load()+p.wrote.answers.Load() != 0 {
				t.Fatalf("busy channel carried heartbeats: consumer wrote %v; provider wrote %v", c.wrote, p.wrote)
			}
			if c.wrote.other.Load() < 20 {
				t.Fatalf("only %d calls were made", c.wrote.other.Load())
			}
		})
	}
}

// H1 / issue 4: an idle channel at interval 1s over 10 s: idle pings about
// 10 times consumer→provider and never the other way. Dubbo 2.7.0's dual
// rule resets the other side's idle clock with every ping and answer, so
// which side pings in a round depends on the phase of the two tickers:
// each side pings on its own, and together they never leave the wire
// silent for more than interval + one tick. All pairs share one 10 s wait.
// The directions are the point; the counts and silences have a slack of
// lateSlack for timers that fire late on a loaded machine (CI at load
// 10-14 on 2 cores failed the 300 ms slack this test had).
func TestH1_IdleChannelPingDirections(t *testing.T) {
	t.Parallel()
	const window = 10 * time.Second
	const lateSlack = time.Second
	type pair struct {
		name, consumer, provider string
		c                        *consumer
		p                        *provider
		w                        *wire
	}
	pairs := []*pair{
		{name: "idle", consumer: "idle", provider: "idle"},
		{name: "dual both sides", consumer: "dual", provider: "dual"},
		{name: "dual consumer only", consumer: "dual", provider: "none"},
		{name: "dual provider only", consumer: "none", provider: "dual"},
	}
	const q = "&heartbeat.interval=1s&heartbeat.timeout=3s"
	for _, pr := range pairs {
		pr.w = &wire{}
		pr.p = startProvider(t, heartbeat(t, "heartbeat="+pr.provider+q))
		pr.p.wrote.wire.Store(pr.w)
		pr.c = dial(t, pr.p.addr, heartbeat(t, "heartbeat="+pr.consumer+q))
		pr.c.wrote.wire.Store(pr.w)
	}
	// H1 as written: dual at interval 3s, traffic that stops.
	h1 := &pair{name: "H1 dual interval 3s after traffic stops", w: &wire{}}
	h1.p = startProvider(t, heartbeat(t, "heartbeat=dual&heartbeat.interval=3s"))
	h1.p.wrote.wire.Store(h1.w)
	h1.c = dial(t, h1.p.addr, heartbeat(t, "heartbeat=dual&heartbeat.interval=3s"))
	h1.c.wrote.wire.Store(h1.w)
	stopCalls := busy(t, h1.c)
	time.Sleep(time.Second)
	stopCalls()
	time.Sleep(window - time.Second + 200*time.Millisecond)
	t.Run(h1.name, func(t *testing.T) {
		t.Logf("consumer wrote %v; provider wrote %v; longest silence %v", h1.c.wrote, h1.p.wrote, h1.w.Longest())
		if h1.c.wrote.pings.Load()+h1.p.wrote.pings.Load() < 2 {
			t.Errorf("%d pings in 9 s of silence at interval 3s, want 2 or more", h1.c.wrote.pings.Load()+h1.p.wrote.pings.Load())
		}
		if l := h1.w.Longest(); l > 4*time.Second+lateSlack {
			t.Errorf("wire silent for %v, want ≤ interval + tick (4 s) + slack", l)
		}
	})
	for _, pr := range pairs {
		t.Run(pr.name, func(t *testing.T) {
			c, p := pr.c, pr.p
			t.Logf("%s, 10 s: consumer wrote %v; provider wrote %v; longest silence %v", pr.name, c.wrote, p.wrote, pr.w.Longest())
			cp, pp := c.wrote.pings.Load(), p.wrote.pings.Load()
			if pr.name == "idle" {
				if cp < 6 || cp > 11 { // 10, fewer when ticks come late
					t.Errorf("consumer sent %d pings in 10 s at interval 1s, want about 10", cp)
				}
				if pp != 0 {
					t.Errorf("provider sent %d pings, want 0", pp)
				}
				if a := p.wrote.answers.Load(); a < cp-1 || a > cp {
					t.Errorf("provider answered %d of %d pings", a, cp)
				}
				return
			}
			if pr.consumer == "none" && cp != 0 || pr.provider == "none" && pp != 0 {
				t.Errorf("a side without heartbeat pinged: consumer %d, provider %d", cp, pp)
			}
			if total := cp + pp; total < 5 || total > 20 {
				t.Errorf("%d pings in 10 s at interval 1s, want one or two per (1 s, 1.33 s] round", total)
			}
			if l := pr.w.Longest(); l > time.Second+time.Second/3+lateSlack {
				t.Errorf("wire silent for %v, want ≤ interval + tick (1.33 s) + slack", l)
			}
		})
	}
}

// H4 / issue 4: dual, interval 1s, timeout 3s: a black-holed path is
// declared dead within [3 s, 3 s + 1 s tick + 0.5 s] on both sides.
func TestH4_DualBlackHoleDetectedOnBothSides(t *testing.T) {
	t.Parallel()
	q := "heartbeat=dual&heartbeat.interval=1s&heartbeat.timeout=3s"
	p := startProvider(t, heartbeat(t, q))
	px := testproxy.New(t, p.addr)
	c := dial(t, px.Addr(), heartbeat(t, q))
	stop := busy(t, c) // the last read is at the black hole, give or take 100 ms
	time.Sleep(1200 * time.Millisecond)
	stop()
	px.BlackHole()
	hole := time.Now()
	for side, ch := range map[string]chan string{"consumer": c.closed, "provider": p.closed} {
		r, ok := waitReason(ch, 8*time.Second)
		took := time.Since(hole)
		if !ok {
			t.Errorf("%s: black-holed channel still up after 8 s", side)
			continue
		}
		t.Logf("%s closed after %v: %s", side, took.Round(time.Millisecond), r)
		if took < 2800*time.Millisecond || took > 4500*time.Millisecond {
			t.Errorf("%s closed after %v, want within [3 s, 4.5 s] (100 ms slack below for the last call's read)", side, took)
		}
		if !strings.Contains(r, "heartbeat dual") {
			t.Errorf("%s: reason %q is not the heartbeat's", side, r)
		}
	}
}

// H4 / issue 4: idle, interval 1s, retries 3: the consumer drops a
// black-holed channel within interval × (retries + 1) + 1 s = 5 s; the
// provider closes its end after heartbeat.timeout (5 s here) of silence.
func TestH4_IdleBlackHoleDetected(t *testing.T) {
	t.Parallel()
	q := "heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=3&heartbeat.timeout=5s"
	p := startProvider(t, heartbeat(t, q))
	px := testproxy.New(t, p.addr)
	c := dial(t, px.Addr(), heartbeat(t, q))
	stop := busy(t, c)
	time.Sleep(1200 * time.Millisecond)
	stop()
	px.BlackHole()
	hole := time.Now()
	r, ok := waitReason(c.closed, 8*time.Second)
	took := time.Since(hole)
	if !ok {
		t.Fatal("consumer: black-holed channel still up after 8 s")
	}
	t.Logf("consumer closed after %v: %s", took.Round(time.Millisecond), r)
	if took < 3500*time.Millisecond || took > 5*time.Second {
		t.Errorf("consumer closed after %v, want about 4 s and at most 5 s", took)
	}
	if !strings.Contains(r, "heartbeat.retries 3") {
		t.Errorf("consumer reason %q", r)
	}
	if n := c.wrote.pings.Load(); n != 3 {
		t.Errorf("consumer sent %d pings, want 3", n)
	}
	r, ok = waitReason(p.closed, 4*time.Second)
	took = time.Since(hole)
	if !ok {
		t.Fatal("provider: silent channel still up 4 s after the consumer gave up")
	}
	t.Logf("provider closed after %v: %s", took.Round(time.Millisecond), r)
	if took < 4800*time.Millisecond || took > 6500*time.Millisecond {
		t.Errorf("provider closed after %v, want heartbeat.timeout 5 s + slack", took)
	}
}

// H2 (the heartbeat's part): a provider process stopped with SIGSTOP keeps
// accepting TCP in its kernel; only the heartbeat notices. Each strategy's
// consumer drops the channel within its bound.
func TestH2_HungProviderProcessDetected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query    string
		min, max time.Duration
	}{
		{"heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=3", 3500 * time.Millisecond, 5 * time.Second},
		{"heartbeat=dual&heartbeat.interval=1s&heartbeat.timeout=3s", 2800 * time.Millisecond, 4500 * time.Millisecond},
	} {
		t.Run(strings.SplitN(tc.query, "&", 2)[0], func(t *testing.T) {
			t.Parallel()
			prov := startChild(t, tc.query)
			c := dial(t, prov.addr, heartbeat(t, tc.query))
			stop := busy(t, c)
			time.Sleep(1200 * time.Millisecond)
			stop()
			if err := prov.Stop(); err != nil {
				t.Fatal(err)
			}
			hung := time.Now()
			r, ok := waitReason(c.closed, 8*time.Second)
			took := time.Since(hung)
			if !ok {
				t.Fatal("channel to a stopped provider still up after 8 s")
			}
			t.Logf("closed after %v: %s", took.Round(time.Millisecond), r)
			if took < tc.min || took > tc.max {
				t.Errorf("closed after %v, want within [%v, %v]", took, tc.min, tc.max)
			}
		})
	}
}
