package spitest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/spi"
)

// HeartbeatWait bounds every wait of the heartbeat and filter suites: Watch
// returning, stop returning, a ping starting. A strategy does each in
// microseconds to an interval; the bound is generous for loaded CI
// machines.
const HeartbeatWait = 5 * time.Second

// hbPingWait is how long StopWhilePingWaits waits for a first ping: 20
// periods of the suite's heartbeat.interval=50ms.
const hbPingWait = time.Second

// HeartbeatOptions adapts TestHeartbeat to a strategy's own keys. The zero
// value suits a strategy that reads the bundled keys (heartbeat.interval).
type HeartbeatOptions struct {
	// Params are added to the URL the suite builds the heartbeat from,
	// after its own "heartbeat=<name>" and "heartbeat.interval=50ms", which
	// they may override: a strategy with keys of its own sets a short
	// period here, so that a watch pings within the suite's 200 ms.
	Params map[string]string
	// Bad lists further parameter sets, each added to that URL, which Build
	// must refuse with an error naming one of the set's keys (an
	// *spi.ParamError's Key, or else its text): out-of-bounds values
	// ({"heartbeat.interval": "1ms"}) or a broken relation between keys.
	// Malformed values of every key the builder describes
	// (spi.KeyDescriber) are checked without being listed here, and must
	// be refused with an *spi.ParamError naming the key.
	Bad []map[string]string
}

// TestHeartbeat runs the heartbeat conformance suite against the strategy
// b builds, adapted by the options (at most one HeartbeatOptions). It
// checks for leaked goroutines at the end, so it must not run in parallel
// with other tests of its package.
//
// Covered: the name; Build accepts the suite's URL and refuses, with an
// *spi.ParamError naming the key, a malformed value of every key of type
// duration, int, int list, bool, size or enum that the builder describes
// (spi.KeyDescriber), and with an error naming one of its keys every set
// of HeartbeatOptions.Bad; Build starts no goroutine.
// Then, on a consumer and on a provider channel (the suite's spi.Channel,
// whose pings are answered at once and count as a read): Watch returns
// without waiting for the channel; stop, called once after the watch ran
// for 200 ms, returns within HeartbeatWait, and after it returns the
// strategy neither pings nor closes the channel; stop is idempotent (a
// second call, two concurrent calls); stop returns within HeartbeatWait
// while one of the strategy's pings waits for an answer (skipped on a side
// that sent none within a second), after the channel died, and right
// after Watch; 64 watches started and stopped from 8 goroutines are
// race-free; no goroutine outlives the stops. A panic of Build, Watch or
// stop fails its subtest with the panic's value and stack (a panic in a
// goroutine the strategy starts cannot be caught).
func TestHeartbeat(t *testing.T, b spi.HeartbeatBuilder, o ...HeartbeatOptions) {
	t.Helper()
	leaks := goleak.IgnoreCurrent()
	defer catch(t, "heartbeat builder")
	var opt HeartbeatOptions
	switch len(o) {
	case 0:
	case 1:
		opt = o[0]
	default:
		t.Fatalf("spitest: TestHeartbeat takes at most one HeartbeatOptions, got %d", len(o))
	}
	if err := checkName(b.Name()); err != nil {
		t.Fatalf("heartbeat builder: %v", err)
	}
	u := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo").
		With("heartbeat", b.Name()).With("heartbeat.interval", "50ms").WithParams(opt.Params)
	hb, err := b.Build(u)
	if err != nil {
		t.Fatalf("Build(%s): %v", u, err)
	}

	run(t, "BuildRefusesBadKeys", "heartbeat Build", func(t *testing.T) {
		sets := slices.Clone(opt.Bad)
		if kd, ok := b.(spi.KeyDescriber); ok {
			for _, k := range kd.Keys() {
				if v, ok := malformed(k); ok {
					sets = append(sets, map[string]string{k.Key: v})
				}
			}
		}
		if len(sets) == 0 {
			t.Skip("the builder describes no key of a checkable type (spi.KeyDescriber) and HeartbeatOptions.Bad is empty")
		}
		for i, set := range sets {
			_, err := b.Build(u.WithParams(set))
			keys := slices.Sorted(maps.Keys(set))
			var pe *spi.ParamError
			switch {
			case err == nil:
				t.Errorf("Build with %v: no error; want one naming %v", set, keys)
			case errors.As(err, &pe):
				if _, ok := set[pe.Key]; !ok {
					t.Errorf("Build with %v: the *spi.ParamError names key %q; want one of %v", set, pe.Key, keys)
				}
			case i < len(opt.Bad):
				// A bound or a relation between keys: any error naming a key.
				if !slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(err.Error(), k) }) {
					t.Errorf("Build with %v: %v; want an error naming one of %v", set, err, keys)
				}
			default:
				t.Errorf("Build with %v: %v; want an *spi.ParamError naming the key (a malformed value of a described key)", set, err)
			}
		}
	})
	run(t, "BuildStartsNothing", "heartbeat Build", func(t *testing.T) {
		before := goleak.IgnoreCurrent()
		for range 10 {
			if _, err := b.Build(u); err != nil {
				t.Fatalf("Build(%s): %v", u, err)
			}
		}
		if err := goleak.Find(before); err != nil {
			t.Fatalf("Build started goroutines (Build must be pure; Watch starts): %v", err)
		}
	})
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		t.Run(string(side), func(t *testing.T) {
			run(t, "WatchThenStop", "heartbeat", func(t *testing.T) { testHeartbeatWatchStop(t, hb, side) })
			run(t, "StopWhilePingWaits", "heartbeat", func(t *testing.T) { testHeartbeatPingWaits(t, hb, side) })
			run(t, "StopAfterChannelDied", "heartbeat", func(t *testing.T) { testHeartbeatChannelDied(t, hb, side) })
			run(t, "StopRightAfterWatch", "heartbeat", func(t *testing.T) {
				ch := newHBChannel(side)
				stop := hbWatch(t, hb, ch)
				hbStop(t, stop, "stop right after Watch")
			})
		})
	}
	run(t, "Concurrent", "heartbeat", func(t *testing.T) {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				defer catch(t, "heartbeat Watch or stop")
				side := spi.Consumer
				if g%2 == 1 {
					side = spi.Provider
				}
				var stops []func()
				for range 8 {
					stops = append(stops, hb.Watch(newHBChannel(side)))
				}
				time.Sleep(20 * time.Millisecond)
				for _, stop := range stops {
					stop()
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(HeartbeatWait):
			t.Fatalf("64 watches started and stopped from 8 goroutines: not done within %v", HeartbeatWait)
		}
	})
	run(t, "NoGoroutineLeak", "heartbeat", func(t *testing.T) { goleak.VerifyNone(t, leaks) })
}

// malformed returns a value of k's key that does not have the syntax of
// k.Type; false for types whose every value is well-formed (string, path,
// hosts).
func malformed(k spi.KeyDoc) (string, bool) {
	switch k.Type {
	case spi.KeyTypeDuration, spi.KeyTypeInt, spi.KeyTypeSize:
		return "not-a-" + k.Type, true
	case spi.KeyTypeIntList:
		return "one,two", true
	case spi.KeyTypeBool:
		return "maybe", true
	case spi.KeyTypeEnum:
		return "not-one-of-" + fmt.Sprint(len(k.Values)) + "-values", true
	}
	return "", false
}

// testHeartbeatWatchStop lets a watch run for 200 ms, stops it once, checks
// that the strategy leaves the channel alone afterwards, and stops it again.
func testHeartbeatWatchStop(t *testing.T, hb spi.Heartbeat, side spi.Side) {
	ch := newHBChannel(side)
	stop := hbWatch(t, hb, ch)
	time.Sleep(200 * time.Millisecond)
	hbStop(t, stop, "stop after a 200ms watch")
	pings, closes := ch.pings.Load(), ch.closes.Load()
	time.Sleep(150 * time.Millisecond)
	if p, c := ch.pings.Load(), ch.closes.Load(); p != pings || c != closes {
		t.Errorf("after stop returned the strategy pinged %d and closed %d more times; want none (stop waits for every goroutine and timer of the watch)", p-pings, c-closes)
	}
	hbStop(t, stop, "a second stop")
	s1, s2 := async("heartbeat stop", stop), async("heartbeat stop", stop)
	within(t, s1, HeartbeatWait, "two concurrent stops of a stopped watch")
	within(t, s2, HeartbeatWait, "two concurrent stops of a stopped watch")
}

// testHeartbeatPingWaits stops a watch while one of its pings waits for an
// answer that never comes (until the ping's context ends).
func testHeartbeatPingWaits(t *testing.T, hb spi.Heartbeat, side spi.Side) {
	ch := newHBChannel(side)
	ch.hold.Store(true)
	stop := hbWatch(t, hb, ch)
	select {
	case <-ch.pinging:
	case <-ch.closed:
		hbStop(t, stop, "stop after the strategy closed the channel")
		t.Skipf("the strategy closed the %s channel (%q) before pinging", side, ch.reason())
	case <-time.After(hbPingWait):
		hbStop(t, stop, "stop of a watch that sent no ping")
		t.Skipf("no ping on the %s side within %v (a strategy whose period is not heartbeat.interval sets a short one in HeartbeatOptions.Params)", side, hbPingWait)
	}
	hbStop(t, stop, "stop while a ping waits for its answer")
}

// testHeartbeatChannelDied stops a watch after its channel died.
func testHeartbeatChannelDied(t *testing.T, hb spi.Heartbeat, side spi.Side) {
	ch := newHBChannel(side)
	stop := hbWatch(t, hb, ch)
	time.Sleep(20 * time.Millisecond)
	ch.Close("spitest: the channel died")
	hbStop(t, stop, "stop after the channel died")
}

// hbWatch calls Watch and fails t unless it returns a stop function within
// HeartbeatWait.
func hbWatch(t *testing.T, hb spi.Heartbeat, ch *hbChannel) func() {
	t.Helper()
	var stop func()
	done := async("heartbeat Watch", func() { stop = hb.Watch(ch) })
	within(t, done, HeartbeatWait, fmt.Sprintf("Watch on a %s channel (Watch must not block: it starts timers or goroutines and returns)", ch.side))
	if stop == nil {
		t.Fatal("Watch returned a nil stop function")
	}
	return stop
}

// hbStop calls stop and fails t unless it returns within HeartbeatWait.
func hbStop(t *testing.T, stop func(), what string) {
	t.Helper()
	within(t, async("heartbeat stop", stop), HeartbeatWait, what)
}

// hbChannel is the suite's spi.Channel. A ping is answered at once and
// counts as a read and a write, unless hold is set: it then waits for its
// context or for Close. Safe for concurrent use.
type hbChannel struct {
	side    spi.Side
	hold    atomic.Bool
	pings   atomic.Int64
	closes  atomic.Int64
	pinging chan struct{} // closed when the first held ping starts
	closed  chan struct{}
	once    sync.Once
	pingOne sync.Once
	mu      sync.Mutex
	read    time.Time
	write   time.Time
	why     string
}

func newHBChannel(side spi.Side) *hbChannel {
	now := time.Now()
	return &hbChannel{side: side, pinging: make(chan struct{}), closed: make(chan struct{}), read: now, write: now}
}

func (c *hbChannel) Side() spi.Side     { return c.side }
func (c *hbChannel) RemoteAddr() string { return "127.0.0.1:20880" }

func (c *hbChannel) LastRead() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.read
}

func (c *hbChannel) LastWrite() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.write
}

func (c *hbChannel) Ping(ctx context.Context) error {
	c.pings.Add(1)
	c.mu.Lock()
	c.write = time.Now()
	c.mu.Unlock()
	if c.hold.Load() {
		c.pingOne.Do(func() { close(c.pinging) })
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closed:
			return errors.New("spitest: channel closed")
		}
	}
	select {
	case <-c.closed:
		return errors.New("spitest: channel closed")
	default:
	}
	c.mu.Lock()
	c.read = time.Now()
	c.mu.Unlock()
	return nil
}

func (c *hbChannel) Close(reason string) {
	c.closes.Add(1)
	c.once.Do(func() {
		c.mu.Lock()
		c.why = reason
		c.mu.Unlock()
		close(c.closed)
	})
}

func (c *hbChannel) reason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.why
}

func (c *hbChannel) Done() <-chan struct{} { return c.closed }

var _ spi.Channel = (*hbChannel)(nil)
