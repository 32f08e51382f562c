package exchange

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// Pings while a request runs on the channel are liveness checks during a
// long call, never a flood: back-to-back pings during a 1 s call are all
// answered and the call returns (the tester's heartbeat.interval=200ms
// consumer lost every call longer than about 4 intervals).
func TestPingFlood_PingsDuringALongCallAreAnswered(t *testing.T) {
	f := startServer(t, false, nil) // defaults: 1 s, 2 strikes
	ch := f.dial(nil)
	call := make(chan spi.Result, 1)
	go func() { call <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 1000), 5*time.Second) }()
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 1 }) {
		t.Fatal("the long call never started")
	}
	for i := range 10 {
		if err := ch.Ping(pingCtx(t)); err != nil {
			t.Fatalf("ping %d during the call: %v", i+1, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res := <-call; res.Err != nil {
		t.Fatalf("the long call: %v", res.Err)
	}
	if r := f.logs.find("too many pings"); r != "" {
		t.Fatal(r)
	}
	// Idle again (the provider counts the call out after writing its
	// response): the guard applies as before.
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 0 }) {
		t.Fatal("the call is still in flight on the provider")
	}
	var err error
	for range 3 * pingBurst {
		if err = ch.Ping(pingCtx(t)); err != nil {
			break
		}
	}
	if spi.StatusOf(err) != spi.StatusChannelInactive {
		t.Fatalf("back-to-back pings on the idle channel: %v; want the guard to close it", err)
	}
}

// A consumer whose heartbeat.interval is under the minimum the provider's
// hello advertises is told once, with both values; one within it is not.
func TestPingFlood_ConsumerToldOfTheProvidersMinimum(t *testing.T) {
	for _, tc := range []struct {
		hello string
		warn  bool
	}{
		{"heartbeat=idle&heartbeat.interval=200ms", true},
		{"heartbeat=300", true}, // Dubbo's bare interval in ms
		{"heartbeat=idle&heartbeat.interval=1s", false},
	} {
		f := startServer(t, false, func(o *Options) { o.Hello = "heartbeat.min.ping.interval=1s"; o.MinPingInterval = time.Second })
		logs := &logSink{}
		ch := f.dial(func(o *Options) { o.Hello = tc.hello; o.Logger = slog.New(logs) })
		for range 2 {
			if err := ch.Ping(pingCtx(t)); err != nil {
				t.Fatal(err)
			}
		}
		got := logs.find("below the provider's heartbeat.min.ping.interval")
		if (got != "") != tc.warn {
			t.Errorf("consumer hello %q: warning %q, want one: %v", tc.hello, got, tc.warn)
		}
	}
}

// Pings read together from one buffer fill (queued while the provider was
// stopped: SIGSTOP, a VM pause) count one strike, not one each: ten of
// them in one write are all answered and the channel stays up, while
// pings arriving one by one still close it (TestPingFlood_TooManyPingsClosesChannel).
func TestPingFlood_PingsQueuedTogetherAreOneStrike(t *testing.T) {
	f := startServer(t, false, nil) // defaults: 1 s, 2 strikes
	c := rawConn(t, f)
	var burst []byte
	for id := uint64(1); id <= 10; id++ {
		burst = protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: id}.Append(burst)
	}
	for round := range 2 { // two bursts: two strikes, still under the limit
		if _, err := c.Write(burst); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for i := range 10 {
			h, _, err := readFrame(br)
			if err != nil || !h.IsEvent() || h.IsRequest() {
				t.Fatalf("burst %d, answer %d: %+v, %v (channel closed?)", round, i+1, h, err)
			}
		}
		if br.Buffered() > 0 {
			t.Fatal("unexpected bytes after the answers")
		}
	}
	if r := f.logs.find("too many pings"); r != "" {
		t.Fatal(r)
	}
}

// Pings sent at the permitted rate but delivered unevenly, as a lossy link
// delivers them (TCP holds each ping behind a lost segment until its
// retransmission, then the next ones on time right after), are never a
// flood: here every gap between separate arrivals is under ¾ of the
// minimum, three and more in a row, with bunches read at once in between.
// Judged gap by gap the guard closed such a consumer (tester26 finding 1:
// twice in 165 s at 35 % loss with heartbeat.interval=1s); judged by rate
// with a burst (GCRA) it answers them all.
func TestPingFlood_LossyLinkBunchingIsNotAFlood(t *testing.T) {
	const minimum = 100 * time.Millisecond
	f := startServer(t, false, func(o *Options) { o.MinPingInterval = minimum }) // 2 strikes
	c := rawConn(t, f)
	answers := make(chan error, 1)
	const n = 40
	go func() {
		br := bufio.NewReader(c)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		for i := range n {
			h, _, err := readFrame(br)
			if err == nil && (!h.IsEvent() || h.IsRequest()) {
				err = fmt.Errorf("answer %d: %+v", i+1, h)
			}
			if err != nil {
				answers <- fmt.Errorf("answer %d: %w (channel closed?)", i+1, err)
				return
			}
		}
		answers <- nil
	}()
	ping := func(id uint64) []byte {
		return protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: id}.Append(nil)
	}
	// delay of each ping behind its send time (ping k is sent at k ×
	// minimum); delays that shrink give gaps of 70 ms (< 75 ms) in a row,
	// -1 marks a ping held back and written with the next one
	delays := []time.Duration{0, 90, 60, 30, 0, -1, -1, 240, 170, 100, 30, 0, 90, 60, 30, 0, -1, -1, -1, 330, 260, 190, 120, 50, 0}
	start := time.Now()
	var held []byte
	id := uint64(1)
	for k := 0; id <= n; k++ {
		d := time.Duration(0)
		if k < len(delays) {
			d = delays[k] * time.Millisecond
		}
		held = append(held, ping(id)...)
		id++
		if d < 0 {
			continue
		}
		time.Sleep(time.Until(start.Add(time.Duration(k)*minimum + d)))
		if _, err := c.Write(held); err != nil {
			t.Fatalf("write: %v", err)
		}
		held = nil
	}
	if err := <-answers; err != nil {
		t.Fatal(err)
	}
	if r := f.logs.find("too many pings"); r != "" {
		t.Fatal(r)
	}
}
