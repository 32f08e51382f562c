package dual_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/dual"
	"github.com/airnode/airnode/extensions/heartbeat/internal/hbtest"
	"github.com/airnode/airnode/spi"
)

func build(t *testing.T, query string) spi.Heartbeat {
	t.Helper()
	hb, err := dual.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?heartbeat=dual&" + query))
	if err != nil {
		t.Fatal(err)
	}
	return hb
}

func TestDualBothSidesPingWhenIdle(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=90ms")
	c, p := hbtest.NewChannel(spi.Consumer, hbtest.Answering), hbtest.NewChannel(spi.Provider, hbtest.Answering)
	stopC, stopP := hb.Watch(c), hb.Watch(p)
	time.Sleep(1200 * time.Millisecond)
	stopC()
	stopP()
	// Each side pings once its channel is idle for more than the interval,
	// checked every interval/3: one ping per (interval, interval + tick],
	// 90 to 120 ms, so 10 to 13 in 1.2 s (fewer on a slow machine).
	for _, ch := range []*hbtest.Channel{c, p} {
		if n := ch.Pings(); n < 5 || n > 14 {
			t.Errorf("%s sent %d pings in 1.2 s at interval 90ms, want 10 to 13", ch.Side(), n)
		}
		if r := ch.Reason(); r != "" {
			t.Errorf("%s closed a healthy channel: %s", ch.Side(), r)
		}
	}
}

func TestDualBusyChannelSendsNoPing(t *testing.T) {
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

func TestDualWriteIdleAloneTriggersPing(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=90ms")
	ch := hbtest.NewChannel(spi.Provider, hbtest.Answering)
	stop := hb.Watch(ch)
	deadline := time.Now().Add(600 * time.Millisecond)
	for time.Now().Before(deadline) {
		ch.Read() // reads keep coming, nothing is written
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if ch.Pings() == 0 {
		t.Fatal("write-idle channel sent no ping; Dubbo's rule is lastRead OR lastWrite older than the interval")
	}
}

// The reconnect task fires within [timeout, timeout + timeout/3 tick +
// slack] of the last read, on both sides.
func TestDualSilentPeerClosedWithinBound(t *testing.T) {
	t.Parallel()
	const timeout, tick = 300 * time.Millisecond, 100 * time.Millisecond
	hb := build(t, "heartbeat.interval=100ms&heartbeat.timeout=300ms")
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		ch := hbtest.NewChannel(side, hbtest.Hung)
		start := time.Now()
		stop := hb.Watch(ch)
		select {
		case <-ch.Done():
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: silent peer not closed after 3 s", side)
		}
		stop()
		took := ch.ClosedAt().Sub(start)
		if took < timeout || took > timeout+tick+400*time.Millisecond {
			t.Errorf("%s: closed after %v, want within [%v, %v + %v tick + slack]", side, took, timeout, timeout, tick)
		}
		want := map[spi.Side]string{spi.Consumer: "reconnecting", spi.Provider: "closing"}[side]
		if r := ch.Reason(); !strings.Contains(r, "heartbeat.timeout 300ms") || !strings.Contains(r, want) {
			t.Errorf("%s: reason %q, want heartbeat.timeout and %q", side, r, want)
		}
		if n := ch.Pings(); n != 1 {
			t.Errorf("%s: %d pings before the verdict, want 1: one unanswered ping at a time", side, n)
		}
	}
}

// Reads 150 ms apart (more than the interval, so the watch pings, and
// its pings are never answered) keep the channel open for three times its
// timeout. The timeout is 1 s, not 300 ms: under load (two busy loops
// beside a nice 15 test) the test's own 150 ms sleeps stretched past
// 300 ms, and the watch rightly closed a channel the test had stopped
// reading from; the gap the test made is in the message.
func TestDualReadsKeepChannelAlive(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	hb := build(t, "heartbeat.interval=100ms&heartbeat.timeout=1s")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Hung)
	stop := hb.Watch(ch)
	var longest time.Duration
	last := time.Now()
	for deadline := last.Add(3 * timeout); time.Now().Before(deadline); {
		ch.Read()
		if now := time.Now(); now.Sub(last) > longest {
			longest = now.Sub(last)
		}
		last = time.Now()
		time.Sleep(150 * time.Millisecond)
	}
	stop()
	if ch.Pings() == 0 {
		t.Error("no ping in 3 s of reads 150 ms apart at interval 100ms: the reads were not idle gaps")
	}
	if r := ch.Reason(); r != "" {
		t.Fatalf("closed although reads kept arriving (longest gap between them %v, timeout %v): %s", longest.Round(time.Millisecond), timeout, r)
	}
}

func TestDualStopWhilePingsInFlight(t *testing.T) {
	t.Parallel()
	// The hung ping waits up to the interval (2 s) for its answer: stop
	// must cut it short.
	hb := build(t, "heartbeat.interval=2s&heartbeat.timeout=1h")
	ch := hbtest.NewChannel(spi.Consumer, hbtest.Hung)
	stop := hb.Watch(ch)
	deadline := time.Now().Add(10 * time.Second)
	for ch.Pings() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no ping within 10 s at interval 2s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { stop(); stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(1500 * time.Millisecond):
		t.Fatal("stop did not cancel the ping in flight")
	}
}

func TestDualCloseCallingStopDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	hb := build(t, "heartbeat.interval=20ms&heartbeat.timeout=40ms")
	ch := hbtest.NewChannel(spi.Provider, hbtest.Hung)
	stop := hb.Watch(ch)
	stopped := make(chan struct{})
	ch.OnClose(func() { stop(); close(stopped) })
	select {
	case <-stopped:
	case <-time.After(3 * time.Second):
		t.Fatal("stop called from Close did not return")
	}
}

func TestDualConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		want  dual.Config
	}{
		{"heartbeat=dual", dual.Config{Interval: 60 * time.Second, Timeout: 180 * time.Second}},
		{"heartbeat=dual&heartbeat.interval=1s&heartbeat.timeout=3s", dual.Config{Interval: time.Second, Timeout: 3 * time.Second}},
		{"heartbeat=dual&heartbeat.interval=10s&heartbeat.timeout=20s", dual.Config{Interval: 10 * time.Second, Timeout: 20 * time.Second}},
		{"heartbeat=dual&heartbeat.interval=2000", dual.Config{Interval: 2 * time.Second, Timeout: 6 * time.Second}},
	} {
		got, err := dual.ParseConfig(spi.MustParse("airnode://h:1/s?" + tc.query))
		if err != nil {
			t.Errorf("%q: %v", tc.query, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.query, got, tc.want)
		}
	}
}

func TestDualBuildRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		want  []string
	}{
		// Issue 4 acceptance: the message names both keys and the 2× rule.
		{"heartbeat=dual&heartbeat.interval=10s&heartbeat.timeout=15s",
			[]string{`invalid value "15s" for URL key "heartbeat.timeout"`, "at least 2 × heartbeat.interval (10s)", "≥ 20s"}},
		{"heartbeat=dual&heartbeat.interval=1s", nil},
		{"heartbeat=dual&heartbeat.interval=bad", []string{`"heartbeat.interval"`, `"bad"`}},
		{"heartbeat=dual&heartbeat.interval=48h", []string{`invalid value "48h" for URL key "heartbeat.interval": want a duration from`}},
		{"heartbeat=dual&heartbeat.timeout=0", []string{`invalid value "0" for URL key "heartbeat.timeout": want a duration > 0`}},
	} {
		_, err := dual.Builder{}.Build(spi.MustParse("airnode://h:1/s?" + tc.query))
		if tc.want == nil {
			if err != nil {
				t.Errorf("%q: %v", tc.query, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), "heartbeat dual: ") {
			t.Errorf("%q: err = %v, want a heartbeat dual error", tc.query, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: err %q lacks %q", tc.query, err, w)
			}
		}
		// every bad value is a *spi.ParamError naming its key, as the
		// kernel's and other extensions' are
		var pe *spi.ParamError
		if !errors.As(err, &pe) {
			t.Errorf("%q: err %v is not a *spi.ParamError", tc.query, err)
		}
	}
}
