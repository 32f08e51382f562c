package kernel

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// fakeChannel is a channel whose death and ping answers the test controls.
type fakeChannel struct {
	pingErr error
	done    chan struct{}
	once    sync.Once
}

func newFakeChannel(pingErr error) *fakeChannel {
	return &fakeChannel{pingErr: pingErr, done: make(chan struct{})}
}

func (f *fakeChannel) InvokeFrom(ctx context.Context, codec spi.Codec, inv *spi.Invocation, timeout, _ time.Duration) spi.Result {
	select {
	case <-f.done:
		return spi.Result{Err: spi.Errorf(spi.StatusChannelInactive, "closed")}
	default:
		return spi.Result{Value: inv.Args[0]}
	}
}
func (f *fakeChannel) Ping(ctx context.Context) error { return f.pingErr }
func (f *fakeChannel) Close(string)                   { f.once.Do(func() { close(f.done) }) }
func (f *fakeChannel) CloseLogged(reason string)      { f.Close(reason) }
func (f *fakeChannel) Done() <-chan struct{}          { return f.done }
func (f *fakeChannel) Wait()                          {}

// fakeDialer fails while down is set and records every channel it made.
type fakeDialer struct {
	mu      sync.Mutex
	down    bool
	pingErr error
	dials   atomic.Int32
	chans   []*fakeChannel
	gate    chan struct{} // when non-nil, dial waits for it
}

func (d *fakeDialer) dial(ctx context.Context, addr string) (channel, error) {
	d.dials.Add(1)
	if d.gate != nil {
		select {
		case <-d.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return nil, errors.New("dial tcp " + addr + ": connection refused")
	}
	ch := newFakeChannel(d.pingErr)
	d.chans = append(d.chans, ch)
	return ch, nil
}

func (d *fakeDialer) set(down bool, pingErr error) {
	d.mu.Lock()
	d.down, d.pingErr = down, pingErr
	d.mu.Unlock()
}

func (d *fakeDialer) last() *fakeChannel {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.chans[len(d.chans)-1]
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// eventually polls cond until it holds or 5 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// A conn making its first connection is not available and its get fails
// fast with CHANNEL_INACTIVE (retryable): no call waits on it.
func TestConnNotAvailableUntilFirstConnect(t *testing.T) {
	d := &fakeDialer{gate: make(chan struct{})}
	var changed signal
	c := newConn("127.0.0.1:9", d.dial, time.Hour, 10*time.Millisecond, quiet, &changed)
	defer c.close()
	woken := changed.wait()
	if c.ready() || !c.connecting() {
		t.Fatal("ready, or not connecting, while the first connect is in progress")
	}
	start := time.Now()
	_, err := c.get()
	if spi.StatusOf(err) != spi.StatusChannelInactive || !strings.Contains(err.Error(), "not connected yet") || time.Since(start) > time.Second {
		t.Fatalf("get = %v after %v, want a fast CHANNEL_INACTIVE", err, time.Since(start))
	}
	close(d.gate)
	select {
	case <-woken:
	case <-time.After(5 * time.Second):
		t.Fatal("no broadcast when the first connect ended")
	}
	if _, err := c.get(); err != nil || c.connecting() {
		t.Fatalf("get after connect = %v (connecting %v)", err, c.connecting())
	}
}

func TestConnFirstDialErrorNamesAddress(t *testing.T) {
	d := &fakeDialer{down: true}
	c := newConn("127.0.0.1:1", d.dial, time.Second, time.Hour, quiet, nil)
	defer c.close()
	eventually(t, "first attempt over", func() bool { return !c.connecting() })
	_, err := c.get()
	if spi.StatusOf(err) != spi.StatusChannelInactive || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("get = %v", err)
	}
	if c.ready() {
		t.Fatal("ready while reconnecting")
	}
	start := time.Now()
	if _, err := c.get(); err == nil || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("second get = %v after %v, want a fast failure", err, time.Since(start))
	}
}

func TestConnReconnectsWithoutTraffic(t *testing.T) {
	d := &fakeDialer{}
	c := newConn("p:1", d.dial, time.Second, 5*time.Millisecond, quiet, nil)
	defer c.close()
	eventually(t, "connected", c.ready)
	if _, err := c.get(); err != nil {
		t.Fatal(err)
	}
	d.set(true, nil)
	d.last().Close("provider killed")
	eventually(t, "not ready after channel death", func() bool { return !c.ready() })
	n := d.dials.Load()
	eventually(t, "redials with no calls", func() bool { return d.dials.Load() >= n+3 })
	d.set(false, nil)
	eventually(t, "reconnected", c.ready)
	if _, err := c.get(); err != nil {
		t.Fatal(err)
	}
}

func TestConnNotReadyUntilPingAnswered(t *testing.T) {
	d := &fakeDialer{pingErr: errors.New("ping timed out")}
	c := newConn("p:1", d.dial, time.Second, 5*time.Millisecond, quiet, nil)
	defer c.close()
	eventually(t, "first attempt over", func() bool { return !c.connecting() })
	_, err := c.get()
	if err == nil || !strings.Contains(err.Error(), "ping") {
		t.Fatalf("get = %v, want a ping failure", err)
	}
	eventually(t, "several attempts", func() bool { return d.dials.Load() >= 3 })
	if c.ready() {
		t.Fatal("ready although the provider never answered a ping")
	}
	d.set(false, nil)
	eventually(t, "ready once pings are answered", c.ready)
}

func TestConnCloseStopsReconnecting(t *testing.T) {
	d := &fakeDialer{down: true}
	c := newConn("p:1", d.dial, time.Second, time.Millisecond, quiet, nil)
	eventually(t, "dialing", func() bool { return d.dials.Load() >= 2 })
	c.close()
	c.close()
	n := d.dials.Load()
	time.Sleep(20 * time.Millisecond)
	if d.dials.Load() != n {
		t.Fatal("dialing after close")
	}
	if _, err := c.get(); spi.StatusOf(err) != spi.StatusChannelInactive {
		t.Fatalf("get after close = %v", err)
	}
}

func TestConnCloseAbortsDial(t *testing.T) {
	d := &fakeDialer{gate: make(chan struct{})}
	c := newConn("p:1", d.dial, time.Hour, time.Millisecond, quiet, nil)
	eventually(t, "dialing", func() bool { return d.dials.Load() >= 1 })
	done := make(chan struct{})
	go func() { c.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("close blocked behind a dial")
	}
}

// A first ping that times out against the conn's own connect.timeout
// leaves an error failover may retry: it does not wrap
// context.DeadlineExceeded, which would read as the caller's deadline.
func TestConnConnectTimeoutIsRetryable(t *testing.T) {
	d := &fakeDialer{pingErr: spi.Errorf(spi.StatusServerTimeout, "ping: no answer: %w", context.DeadlineExceeded)}
	c := newConn("p:1", d.dial, time.Hour, time.Hour, quiet, nil)
	defer c.close()
	eventually(t, "first attempt over", func() bool { return !c.connecting() })
	_, err := c.get()
	if spi.StatusOf(err) != spi.StatusChannelInactive || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "nothing answered the first ping") {
		t.Fatalf("get = %v, want CHANNEL_INACTIVE not wrapping context.DeadlineExceeded", err)
	}
}

func TestJitterBounds(t *testing.T) {
	for range 1000 {
		if j := jitter(100 * time.Millisecond); j < 80*time.Millisecond || j > 120*time.Millisecond {
			t.Fatalf("jitter = %v", j)
		}
	}
}

func TestConnPoolSharesAndReleases(t *testing.T) {
	d := &fakeDialer{}
	var p connPool
	mk := func(*connLine) *conn { return newConn("p:1", d.dial, time.Second, time.Millisecond, quiet, nil) }
	a := p.acquire("k", mk)
	b := p.acquire("k", mk)
	if a != b {
		t.Fatal("same key, two conns")
	}
	p.release("k")
	eventually(t, "connected", a.ready)
	if _, err := a.get(); err != nil {
		t.Fatalf("closed while referenced: %v", err)
	}
	p.release("k") // closes it in the background, once no call is in flight
	eventually(t, "closed after the last release", func() bool {
		_, err := a.get()
		return spi.StatusOf(err) == spi.StatusChannelInactive
	})
	p.closeAll()
}

// firstPingError tells a close by the provider (a likely transport or TLS
// mismatch) from one by this consumer (its heartbeat gave up on a provider
// paused while the connection was redialled), which is not a mismatch.
func TestFirstPingErrorNamesWhoClosed(t *testing.T) {
	closed := spi.Errorf(spi.StatusChannelInactive, "exchange: channel closed")
	for _, tc := range []struct{ reason, want, not string }{
		{"closed by peer", "likely a transport mismatch (this consumer's transport=smux: set the provider's, airnode call, bench, health: -p transport=NAME", "this consumer closed"},
		{"read: protocol: bad magic 0x1503", "likely a transport mismatch (this consumer's transport=smux", "this consumer closed"},
		{"heartbeat: no answer for 900ms (heartbeat.timeout)", "nothing answered the first ping: this consumer's heartbeat gave up on it after 5ms (heartbeat: no answer", "mismatch"},
	} {
		err := firstPingError(closed, tc.reason, "smux", 5*time.Millisecond, time.Second, true, false)
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, tc.not) {
			t.Errorf("reason %q: %q; want it to contain %q and not %q", tc.reason, msg, tc.want, tc.not)
		}
		// the provider's close without a reason is marked for errors.Is
		// (airnode health retries over the other transport on it), this
		// consumer's own close is not; the ping's error stays in the chain
		mismatch := tc.not == "this consumer closed"
		if errors.Is(err, ErrClosedAtFirstPing) != mismatch || mismatch && !errors.Is(err, closed) {
			t.Errorf("reason %q: errors.Is(ErrClosedAtFirstPing) = %v, want %v; errors.Is(the ping's error) = %v",
				tc.reason, errors.Is(err, ErrClosedAtFirstPing), mismatch, errors.Is(err, closed))
		}
	}
}
