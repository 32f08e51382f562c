package tcp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// countingPool hands out 64-byte buffers and counts them in and out.
type countingPool struct{ gets, puts atomic.Int32 }

func (p *countingPool) get() []byte { p.gets.Add(1); return make([]byte, 64) }
func (p *countingPool) put([]byte)  { p.puts.Add(1) }
func (p *countingPool) held() int32 { return p.gets.Load() - p.puts.Load() }

type lazyResult struct {
	b   []byte
	n   int
	err error
}

// lazyPair connects a consumer to a provider and returns the consumer's
// session and stream and the provider's session and stream as a
// LazyReader.
func lazyPair(t *testing.T) (spi.Session, io.ReadWriteCloser, spi.Session, tcp.LazyReader) {
	t.Helper()
	tr, err := tcp.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0/x"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), spitest.TransportWait)
	defer cancel()
	c, err := tr.Dial(ctx, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	p, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	cs, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := p.Accept()
	if err != nil {
		t.Fatal(err)
	}
	lr, ok := ps.(tcp.LazyReader)
	if !ok {
		t.Fatalf("provider stream %T is no tcp.LazyReader", ps)
	}
	return c, cs, p, lr
}

// startLazyRead runs ReadLazy in a goroutine and waits until its first
// attempt has found no data and given its buffer back.
func startLazyRead(t *testing.T, lr tcp.LazyReader, pool *countingPool) <-chan lazyResult {
	t.Helper()
	done := make(chan lazyResult, 1)
	go func() {
		b, n, err := lr.ReadLazy(pool.get, pool.put)
		done <- lazyResult{b, n, err}
	}()
	deadline := time.Now().Add(spitest.TransportWait)
	for pool.puts.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("ReadLazy never gave its first buffer back")
		}
		time.Sleep(time.Millisecond)
	}
	return done
}

func waitLazy(t *testing.T, done <-chan lazyResult) lazyResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(spitest.TransportWait):
		t.Fatal("ReadLazy did not return")
		return lazyResult{}
	}
}

// TestReadLazy_HoldsNoBufferWhileWaiting: a provider stream waiting for
// data holds no buffer from the pool; when data comes it reads it into one
// and returns it.
func TestReadLazy_HoldsNoBufferWhileWaiting(t *testing.T) {
	_, cs, _, lr := lazyPair(t)
	var pool countingPool
	done := startLazyRead(t, lr, &pool)
	select {
	case r := <-done:
		t.Fatalf("ReadLazy returned with no data sent: n=%d err=%v", r.n, r.err)
	default:
	}
	if h := pool.held(); h != 0 {
		t.Fatalf("waiting ReadLazy holds %d buffers, want 0", h)
	}
	if _, err := cs.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	r := waitLazy(t, done)
	if r.err != nil || string(r.b[:r.n]) != "hello" {
		t.Fatalf("ReadLazy = %q, %v; want \"hello\", nil", r.b[:r.n], r.err)
	}
	if h := pool.held(); h != 1 {
		t.Fatalf("after ReadLazy the caller holds %d buffers, want 1 (the one returned)", h)
	}
}

// TestReadLazy_EndOfStream: the consumer closing its side ends a waiting
// ReadLazy with io.EOF, no buffer held, and kills the provider's session.
func TestReadLazy_EndOfStream(t *testing.T) {
	c, _, p, lr := lazyPair(t)
	var pool countingPool
	done := startLazyRead(t, lr, &pool)
	c.Close()
	r := waitLazy(t, done)
	if r.err != io.EOF || r.b != nil || r.n != 0 {
		t.Fatalf("ReadLazy = %v, %d, %v; want nil, 0, io.EOF", r.b, r.n, r.err)
	}
	if h := pool.held(); h != 0 {
		t.Fatalf("failed ReadLazy left %d buffers out, want 0", h)
	}
	select {
	case <-p.Done():
	case <-time.After(spitest.TransportWait):
		t.Fatal("provider session still alive after end of stream")
	}
}

// TestReadLazy_SessionClosed: closing the provider's session ends a
// waiting ReadLazy with an error matching net.ErrClosed.
func TestReadLazy_SessionClosed(t *testing.T) {
	_, _, p, lr := lazyPair(t)
	var pool countingPool
	done := startLazyRead(t, lr, &pool)
	p.Close()
	r := waitLazy(t, done)
	if !errors.Is(r.err, net.ErrClosed) || r.b != nil {
		t.Fatalf("ReadLazy after Close = %v, %v; want nil and an error matching net.ErrClosed", r.b, r.err)
	}
	if h := pool.held(); h != 0 {
		t.Fatalf("failed ReadLazy left %d buffers out, want 0", h)
	}
}

// TestReadLazy_ReadsEverythingSent: frames of every size written in one
// go come out whole through successive ReadLazy calls with small buffers.
func TestReadLazy_ReadsEverythingSent(t *testing.T) {
	_, cs, _, lr := lazyPair(t)
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	go func() { _, _ = cs.Write(want) }()
	var pool countingPool
	got := make([]byte, 0, len(want))
	for len(got) < len(want) {
		b, n, err := lr.ReadLazy(pool.get, pool.put)
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		got = append(got, b[:n]...)
		pool.put(b)
	}
	if string(got) != string(want) {
		t.Fatal("bytes read differ from bytes written")
	}
	if h := pool.held(); h != 0 {
		t.Fatalf("%d buffers left out, want 0", h)
	}
}
