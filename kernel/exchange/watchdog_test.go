package exchange

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// pipeListener accepts the provider ends of net.Pipe connections made by
// dial: a session without spi.TryWriter whose every write waits for the
// peer to read, so a consumer that reads nothing stops any write at once.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (spi.Session, error) {
	select {
	case c := <-l.conns:
		return newConnSession(c, true), nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

// dial returns the consumer end of a new connection to the server.
func (l *pipeListener) dial(t *testing.T) net.Conn {
	t.Helper()
	c, p := net.Pipe()
	select {
	case l.conns <- p:
	case <-time.After(5 * time.Second):
		t.Fatal("the server accepted no connection in 5 s")
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The adaptive watchdog, which serves every channel of a worker pool,
// never writes: handing off a request that ran long on the reader of a
// consumer that reads nothing, it released the read batch's held answers
// by writing them itself, on a session without spi.TryWriter; the write
// waited for that consumer, holding the watchdog's lock, and every other
// consumer's next request on its reader waited for the lock in turn
// (TestT17_1_NonReadingConsumerIsStopped/tcp/adaptive/echo failed once
// under load: "canary call 1 ... timed out after 10s"; the goroutine dump
// showed the watchdog in net.(*conn).Write under Channel.handOff and the
// canary's reader in watchdog.watch).
func TestAdaptiveWatchdogDoesNotWaitOnAConsumer(t *testing.T) {
	l := newPipeListener()
	srv := NewServer(l, Options{Codec: codecByID, Handler: &echoService{}, Logger: slog.New(&logSink{}), Adaptive: true})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-errc; err != nil {
			t.Errorf("Serve returned %v", err)
		}
	})
	handOffs := func() int64 {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		var n int64
		for ch := range srv.chans {
			n += ch.Stats().HandOffs
		}
		return n
	}

	// The bad consumer: a one-way call (its connection's first read
	// batch, run by the pool, answered by nobody), then, in one read
	// batch run on the reader, a heartbeat (its answer held for the
	// batch) and a 2 s Sleep, which the watchdog hands off. It reads
	// nothing. Under load the Sleep may come over handOffAfter into its
	// batch and go to the pool (no hand-off): then it tries again on a
	// new connection.
	oneWay := requestFrame(t, 1, echoInv("Echo", "warm"))
	protocol.Header{Flags: protocol.FlagRequest | 1, ID: 1, Length: uint32(len(oneWay) - protocol.HeaderLen)}.Put(oneWay)
	for try := 0; handOffs() == 0; try++ {
		if try == 5 {
			t.Fatal("no hand-off of a 2 s request on the reader in 5 tries")
		}
		bad := l.dial(t)
		bad.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := bad.Write(oneWay); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // a new read batch, well within quietAfter
		batch := protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 2}.Append(nil)
		batch = append(batch, requestFrame(t, 3, echoInv("Sleep", 2000))...)
		if _, err := bad.Write(batch); err != nil {
			t.Fatal(err)
		}
		waitFor(time.Second, func() bool { return handOffs() > 0 })
	}

	// A normal consumer: its first call goes to the pool, the next ones
	// run on its reader, which asks the watchdog to watch its channel.
	ch := NewChannel(newConnSession(l.dial(t), false), Options{Side: spi.Consumer, Codec: codecByID, Logger: slog.New(&logSink{})})
	t.Cleanup(func() { ch.Close("test done"); ch.Wait() })
	for i := range 5 {
		start := time.Now()
		res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", fmt.Sprint(i)), 5*time.Second)
		if res.Err != nil || res.Value != fmt.Sprint(i) {
			t.Fatalf("call %d while a consumer that reads nothing was handed off: %v %v (after %v)", i, res.Value, res.Err, time.Since(start))
		}
	}
}
