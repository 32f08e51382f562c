package idle_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/idle"
	"github.com/airnode/airnode/extensions/heartbeat/internal/hbtest"
	"github.com/airnode/airnode/extensions/heartbeat/internal/task"
	"github.com/airnode/airnode/spi"
)

func build(t *testing.T, query string) spi.Heartbeat {
	t.Helper()
	hb, err := idle.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?" + query))
	if err != nil {
		t.Fatal(err)
	}
	return hb
}

// waitClosed waits up to max for ch to close and returns the time it took
// from start.
func waitClosed(t *testing.T, ch *hbtest.Channel, start time.Time, max time.Duration) time.Duration {
	t.Helper()
	select {
	case <-ch.Done():
		return ch.ClosedAt().Sub(start)
	case <-time.After(max):
		t.Fatalf("channel still open after %v (pings %d)", max, ch.Pings())
		return 0
	}
}

func TestIdleConsumerPingsEveryIntervalWhileIdle(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=100ms")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Answering)
	stop := hb.Watch(ch)
	time.Sleep(1050 * time.Millisecond)
	stop()
	// One ping per interval: 10 in 1.05 s, fewer if the machine is slow.
	if n := ch.Pings(); n < 5 || n > 11 {
		t.Fatalf("pings = %d over 1.05 s at interval 100ms, want about 10", n)
	}
	if ch.Reason() != "" {
		t.Fatalf("healthy channel closed: %s", ch.Reason())
	}
}

func TestIdleProviderNeverPings(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=50ms&heartbeat.timeout=10s")
	ch := hbtest.NewChannel(spi.Provider, hbtest.Answering)
	stop := hb.Watch(ch)
	time.Sleep(500 * time.Millisecond)
	stop()
	if n := ch.Pings(); n != 0 {
		t.Fatalf("provider sent %d pings, want 0", n)
	}
}

func TestIdleBusyChannelSendsNoPing(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=500ms") // generous: a stalled busy goroutine must not look idle
	c, p := hbtest.NewChannel(spi.Consumer, hbtest.Answering), hbtest.NewChannel(spi.Provider, hbtest.Answering)
	busy := hbtest.Busy(20*time.Millisecond, c, p)
	defer busy()
	stopC, stopP := hb.Watch(c), hb.Watch(p)
	time.Sleep(2 * time.Second)
	stopC()
	stopP()
	if c.Pings() != 0 || p.Pings() != 0 {
		t.Fatalf("busy channel: consumer sent %d pings, provider %d; want 0 and 0", c.Pings(), p.Pings())
	}
}

func TestIdleHungPeerClosedAfterRetries(t *testing.T) {
	t.Parallel()
	const interval, retries = 100 * time.Millisecond, 3
	hb := build(t, "heartbeat.interval=100ms&heartbeat.retries=3")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Hung)
	start := time.Now()
	stop := hb.Watch(ch)
	defer stop()
	// Pings at 100, 200, 300 ms, each failing one interval (the
	// heartbeat.ping.timeout) later: closed at about interval × (retries +
	// 1) = 400 ms, never sooner.
	took := waitClosed(t, ch, start, 10*time.Second)
	if took < 380*time.Millisecond {
		t.Fatalf("closed after %v, want about 400ms", took)
	}
	// A loaded machine delays every step, so each step is bounded from the
	// one before it, not from the start (at load 20 the sum of the steps
	// passed 1.5 s): the first ping due an interval after Watch, each ping's
	// wait ending at its timeout, the next ping at once, the close at once
	// after the last failure. A ping whose wait ended late (this process did
	// not run, task.Defer) is forgiven, not counted, and the next check
	// comes task.Grace later: each ping beyond heartbeat.retries follows
	// such a pause.
	const slack = 500 * time.Millisecond
	spans, closed := ch.Spans(), ch.ClosedAt()
	pauses := 0
	prev := start.Add(interval) // when the first ping is due
	for i, s := range spans {
		due := prev
		if i > 0 {
			if gap := s.Start.Sub(prev); gap >= task.Grace {
				pauses++
			}
			due = prev.Add(task.Grace)
		}
		if s.Start.Sub(due) > slack || s.End.Sub(s.Start) > interval+slack {
			t.Errorf("ping %d of %d ran from %v to %v after Watch; want it started by %v and ended about %v later",
				i+1, len(spans), s.Start.Sub(start), s.End.Sub(start), due.Sub(start), interval)
		}
		prev = s.End
	}
	if n := len(spans); n < retries || n > retries+pauses {
		t.Fatalf("pings = %d, want heartbeat.retries = 3, plus at most one per pause of task.Grace (%d) for a ping forgiven for ending late", n, pauses)
	}
	if after := closed.Sub(prev); after < 0 || after > slack {
		t.Fatalf("closed %v after the last ping's wait ended (%v after Watch), want at once", after, prev.Sub(start))
	}
	if r := ch.Reason(); !strings.Contains(r, "3 pings to 127.0.0.1:20880 failed in a row") || !strings.Contains(r, "heartbeat.retries 3") {
		t.Fatalf("reason %q does not count 3 failed pings and name heartbeat.retries", r)
	}
}

func TestIdlePingTimeoutShorterThanInterval(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=100ms&heartbeat.ping.timeout=20ms&heartbeat.retries=2")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Hung)
	start := time.Now()
	stop := hb.Watch(ch)
	defer stop()
	// Pings at 100 and 200 ms, the second times out at 220 ms.
	if took := waitClosed(t, ch, start, 3*time.Second); took < 200*time.Millisecond || took > 1200*time.Millisecond {
		t.Fatalf("closed after %v, want about 220ms", took)
	}
}

func TestIdleFailuresResetBySuccessfulPing(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=50ms&heartbeat.retries=3")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Answering)
	// Two failures, a success, two failures, a success...: never 3 in a row.
	for range 4 {
		ch.Script(hbtest.Failing, hbtest.Failing, hbtest.Answering)
	}
	stop := hb.Watch(ch)
	time.Sleep(900 * time.Millisecond)
	stop()
	if r := ch.Reason(); r != "" {
		t.Fatalf("closed although failures never reached 3 in a row: %s", r)
	}
	if n := ch.Pings(); n < 8 {
		t.Fatalf("pings = %d, want the scripted 12 or close to it", n)
	}
}

func TestIdleFailuresResetByAnyRead(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=100ms&heartbeat.retries=3")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Hung)
	stop := hb.Watch(ch)
	defer stop()
	// An RPC response every 250 ms: at most two pings fail between two
	// reads, and each read resets the count, so the channel stays up.
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		ch.Read()
	}
	if r := ch.Reason(); r != "" {
		t.Fatalf("closed although reads kept arriving: %s", r)
	}
	if ch.Pings() < 3 {
		t.Fatalf("pings = %d, want the read-idle gaps to be pinged", ch.Pings())
	}
	// Then the reads stop: three more failures close it.
	waitClosed(t, ch, time.Now(), 3*time.Second)
}

func TestIdleFailingPingsCountToo(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=50ms&heartbeat.retries=4")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Failing)
	stop := hb.Watch(ch)
	defer stop()
	waitClosed(t, ch, time.Now(), 3*time.Second)
	if n := ch.Pings(); n != 4 {
		t.Fatalf("pings = %d, want 4", n)
	}
}

func TestIdleProviderClosesAllIdleChannel(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=50ms&heartbeat.timeout=300ms")
	ch := hbtest.NewChannel(spi.Provider, hbtest.Answering)
	start := time.Now()
	stop := hb.Watch(ch)
	defer stop()
	if took := waitClosed(t, ch, start, 3*time.Second); took < 300*time.Millisecond || took > 1300*time.Millisecond {
		t.Fatalf("closed after %v, want about heartbeat.timeout = 300ms", took)
	}
	if r := ch.Reason(); !strings.Contains(r, "heartbeat.timeout 300ms") {
		t.Fatalf("reason %q does not name heartbeat.timeout", r)
	}
}

func TestIdleProviderKeepsChannelWithWritesOnly(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=50ms&heartbeat.timeout=300ms")
	ch := hbtest.NewChannel(spi.Provider, hbtest.Answering)
	stop := hb.Watch(ch)
	deadline := time.Now().Add(900 * time.Millisecond)
	for time.Now().Before(deadline) {
		ch.Write() // all-idle means nothing read AND nothing written
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	if r := ch.Reason(); r != "" {
		t.Fatalf("closed a channel that was writing: %s", r)
	}
}

func TestIdleStopWhilePingInFlight(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=20ms&heartbeat.ping.timeout=1h")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Hung)
	stop := hb.Watch(ch)
	for ch.Pings() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { stop(); stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("stop did not cancel the ping in flight")
	}
}

func TestIdleCloseCallingStopDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=20ms&heartbeat.retries=1")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Failing)
	stop := hb.Watch(ch)
	stopped := make(chan struct{})
	ch.OnClose(func() { stop(); close(stopped) }) // an exchange that stops the heartbeat inside Close
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("stop called from Close did not return")
	}
	stop()
}

func TestIdleConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		want  idle.Config
	}{
		{"", idle.Config{Interval: 60 * time.Second, PingTimeout: 60 * time.Second, Retries: 3, Timeout: 200 * time.Second}},
		{"heartbeat=3000", idle.Config{Interval: 3 * time.Second, PingTimeout: 3 * time.Second, Retries: 3, Timeout: 29 * time.Second}},
		{"heartbeat=idle&heartbeat.interval=1s&heartbeat.retries=5&heartbeat.ping.timeout=300ms&heartbeat.timeout=10s",
			idle.Config{Interval: time.Second, PingTimeout: 300 * time.Millisecond, Retries: 5, Timeout: 10 * time.Second}},
		{"heartbeat.interval=1500", idle.Config{Interval: 1500 * time.Millisecond, PingTimeout: 1500 * time.Millisecond, Retries: 3, Timeout: 24500 * time.Millisecond}},
	} {
		got, err := idle.ParseConfig(spi.MustParse("airnode://h:1/s?" + tc.query))
		if err != nil {
			t.Errorf("%q: %v", tc.query, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.query, got, tc.want)
		}
	}
}

func TestIdleBuildRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ query, want string }{
		{"heartbeat.interval=soon", `"heartbeat.interval"`},
		{"heartbeat.interval=1ms", "heartbeat.interval"},
		{"heartbeat=5", "heartbeat"},
		{"heartbeat=3000&heartbeat.interval=2s", "heartbeat=3000 (Dubbo's bare interval, 3s) and heartbeat.interval=2s give the heartbeat interval twice with different values: give one"},
		{"heartbeat.interval=0", "heartbeat.interval"},
		{"heartbeat.retries=0", `invalid value "0" for URL key "heartbeat.retries": want an integer from 1 to`},
		{"heartbeat.retries=three", `"heartbeat.retries"`},
		{"heartbeat.ping.timeout=0", `invalid value "0" for URL key "heartbeat.ping.timeout": want a duration > 0`},
		{"heartbeat.interval=10s&heartbeat.timeout=10s", `invalid value "10s" for URL key "heartbeat.timeout": want a duration longer than heartbeat.interval (10s)`},
	} {
		_, err := idle.Builder{}.Build(spi.MustParse("airnode://h:1/s?" + tc.query))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "heartbeat idle: ") {
			t.Errorf("%q: err = %v, want one containing %q", tc.query, err, tc.want)
		}
		var pe *spi.ParamError
		if err != nil && tc.query != "heartbeat=3000&heartbeat.interval=2s" && !errors.As(err, &pe) {
			t.Errorf("%q: err %v is not a *spi.ParamError", tc.query, err)
		}
	}
	// The same interval given both ways is one setting given twice alike.
	for _, q := range []string{"heartbeat=3000&heartbeat.interval=3s", "heartbeat=3000&heartbeat.interval=3000"} {
		h, err := idle.Builder{}.Build(spi.MustParse("airnode://h:1/s?" + q))
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		if iv := h.(*idle.Heartbeat).Config().Interval; iv != 3*time.Second {
			t.Errorf("%q: interval %v, want 3s", q, iv)
		}
	}
}
