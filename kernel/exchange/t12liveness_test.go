package exchange

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// checkHB is a heartbeat that watches nothing and asks for the liveness
// check after silent timeouts (spi.TimeoutCheck) with maxWait.
type checkHB struct {
	maxWait time.Duration
	off     bool
}

func (checkHB) Watch(spi.Channel) func()              { return func() {} }
func (h checkHB) TimeoutCheck() (time.Duration, bool) { return h.maxWait, !h.off }

// plainHB is a heartbeat without spi.TimeoutCheck.
type plainHB struct{}

func (plainHB) Watch(spi.Channel) func() { return func() {} }

// frameLog records the frames a silent peer read: pings (events) and
// calls, with when.
type frameLog struct {
	mu     sync.Mutex
	frames []frameSeen
}

type frameSeen struct {
	ping bool
	at   time.Time
}

func (l *frameLog) add(ping bool, at time.Time) {
	l.mu.Lock()
	l.frames = append(l.frames, frameSeen{ping, at})
	l.mu.Unlock()
}

func (l *frameLog) pings() (n int, first time.Time) { return l.count(true) }
func (l *frameLog) calls() (n int, first time.Time) { return l.count(false) }

func (l *frameLog) count(ping bool) (n int, first time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.frames {
		if f.ping == ping {
			if n == 0 {
				first = f.at
			}
			n++
		}
	}
	return n, first
}

// silentPeer returns a consumer channel (with hb) to a raw TCP peer that
// reads every frame, logging requests and pings, and never answers nor
// closes: a black-holed provider. The channel's logs go to logs.
func silentPeer(t *testing.T, hb spi.Heartbeat) (*Channel, *frameLog, *logSink, chan string) {
	t.Helper()
	seen := &frameLog{}
	raw := newRawPeer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			h, _, err := readFrame(br)
			if err != nil {
				return
			}
			seen.add(h.IsEvent(), time.Now())
		}
	})
	conn, err := net.Dial("tcp", raw.addr())
	if err != nil {
		t.Fatal(err)
	}
	logs := &logSink{}
	closed := make(chan string, 1)
	ch := NewChannel(newConnSession(conn, false), Options{Side: spi.Consumer, Codec: codecByID, Heartbeat: hb,
		Logger: slog.New(logs), OnClose: func(_ *Channel, r string) { closed <- r }})
	t.Cleanup(func() { ch.Close("done"); ch.Wait() })
	return ch, seen, logs, closed
}

func silentCall(ch *Channel, timeout time.Duration) error {
	return ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "x"), timeout).Err
}

// A bare exchange (no heartbeat, or one without spi.TimeoutCheck) keeps
// its behaviour: calls to a silent peer time out, no ping, no close.
func TestT12_NoTimeoutCheckNoPing(t *testing.T) {
	t.Parallel()
	for name, hb := range map[string]spi.Heartbeat{"nil": nil, "without TimeoutCheck": plainHB{}, "check off": checkHB{off: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ch, seen, _, _ := silentPeer(t, hb)
			for range 3 {
				wantStatus(t, silentCall(ch, 50*time.Millisecond), spi.StatusServerTimeout)
			}
			time.Sleep(1200 * time.Millisecond) // past a check's minimum wait
			if r := ch.Reason(); r != "" {
				t.Fatalf("closed: %s", r)
			}
			if n, _ := seen.pings(); n != 0 {
				t.Fatalf("%d pings sent", n)
			}
		})
	}
}

// With the check on: the first SERVER_TIMEOUT sends one ping at once; it
// waits max(1 s, timeout) (no cap here), then the channel closes with the
// reason naming the calls and the wait, logged at Warn; the pending calls
// and later ones fail CHANNEL_INACTIVE with that reason.
func TestT12_SilentTimeoutPingsThenCloses(t *testing.T) {
	t.Parallel()
	ch, seen, logs, closed := silentPeer(t, checkHB{})
	wantStatus(t, silentCall(ch, 50*time.Millisecond), spi.StatusServerTimeout)
	timedOut := time.Now()
	if !waitFor(time.Second, func() bool { n, _ := seen.pings(); return n == 1 }) {
		t.Fatal("no ping after the silent timeout")
	}
	_, pinged := seen.pings()
	if d := pinged.Sub(timedOut); d > 300*time.Millisecond {
		t.Errorf("ping sent %v after the timeout, want at once", d)
	}
	var inflight atomic.Value
	go func() { inflight.Store(silentCall(ch, 10*time.Second)) }() // pending when the check closes
	var r string
	select {
	case r = <-closed:
	case <-time.After(3 * time.Second):
		t.Fatal("channel still open 3 s after the silent timeout")
	}
	took := time.Since(timedOut)
	if took < 900*time.Millisecond || took > 2*time.Second {
		t.Errorf("closed %v after the timeout, want about 1 s (the check's minimum wait)", took)
	}
	if !strings.Contains(r, "liveness check: ") || !strings.Contains(r, "timed out with nothing read since they were sent") ||
		!strings.Contains(r, "a ping got no answer within 1s") || !strings.Contains(r, "heartbeat.ping.on.timeout") {
		t.Errorf("reason %q", r)
	}
	if !strings.Contains(r, "2 calls") && !strings.Contains(r, "1 call ") {
		t.Errorf("reason %q does not count the calls", r)
	}
	if l := logs.find("channel closed"); !strings.Contains(l, "liveness check") {
		t.Errorf("close not logged with its reason: %q", l)
	}
	if !waitFor(time.Second, func() bool { return inflight.Load() != nil }) {
		t.Fatal("the call pending at the close did not return")
	}
	e := wantStatus(t, inflight.Load().(error), spi.StatusChannelInactive)
	if !strings.Contains(e.Message, "liveness check") {
		t.Errorf("pending call failed with %q, want the check's reason", e.Message)
	}
	if n, _ := seen.pings(); n != 1 {
		t.Errorf("%d pings, want 1", n)
	}
}

// Many calls timing out at once make one ping (one outstanding), whose
// wait the strategy caps (maxWait 200ms under the 1 s minimum): the channel
// closes about 200 ms after the timeouts.
func TestT12_OnePingCappedByStrategy(t *testing.T) {
	t.Parallel()
	ch, seen, _, closed := silentPeer(t, checkHB{maxWait: 200 * time.Millisecond})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { wantStatus(t, silentCall(ch, 100*time.Millisecond), spi.StatusServerTimeout) })
	}
	wg.Wait()
	timedOut := time.Now()
	select {
	case r := <-closed:
		took := time.Since(timedOut)
		t.Logf("closed after %v: %s", took.Round(time.Millisecond), r)
		if took > 700*time.Millisecond {
			t.Errorf("closed %v after the timeouts, want about the 200ms cap", took)
		}
		if !strings.Contains(r, "within 200ms") || !strings.Contains(r, "8 calls") {
			t.Errorf("reason %q, want 8 calls and the 200ms wait", r)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("channel still open 3 s after the timeouts")
	}
	if n, _ := seen.pings(); n != 1 {
		t.Errorf("%d pings for 8 simultaneous timeouts, want 1", n)
	}
	if n, _ := seen.calls(); n != 8 {
		t.Errorf("peer read %d calls, want 8", n)
	}
}

// Close while a check's ping is outstanding returns at once and Wait
// returns: the check's goroutine ends with the channel (goleak in
// TestMain).
func TestT12_CloseDuringCheck(t *testing.T) {
	t.Parallel()
	ch, seen, _, _ := silentPeer(t, checkHB{maxWait: time.Minute})
	wantStatus(t, silentCall(ch, 2*time.Second), spi.StatusServerTimeout)
	if !waitFor(time.Second, func() bool { n, _ := seen.pings(); return n == 1 }) {
		t.Fatal("no ping after the silent timeout")
	}
	start := time.Now()
	ch.Close("test closes during the check")
	ch.Wait()
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Close and Wait took %v with a check outstanding", d)
	}
	if r := ch.Reason(); r != "test closes during the check" {
		t.Fatalf("reason %q, want the test's", r)
	}
}
