package smux_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { spitest.TestTransport(t, smux.Builder{}) }

func build(t *testing.T) spi.Transport {
	t.Helper()
	tr, err := smux.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0/x"))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestGarbageFromPeerKillsSession: bytes that are no smux frame end the
// provider's session (smux alone would leave it half-dead).
func TestGarbageFromPeerKillsSession(t *testing.T) {
	l, err := build(t).Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	accepted := make(chan error, 1)
	go func() {
		_, err := s.Accept()
		accepted <- err
	}()
	if _, err := raw.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-accepted:
		if err == nil {
			t.Fatal("Accept returned a stream for garbage")
		}
	case <-time.After(spitest.TransportWait):
		t.Fatal("Accept still blocked after garbage")
	}
	select {
	case <-s.Done():
	case <-time.After(spitest.TransportWait):
		t.Fatal("session not dead after garbage")
	}
	// The provider closed the connection (EOF, or a reset: it had unread
	// garbage).
	raw.SetReadDeadline(time.Now().Add(spitest.TransportWait))
	_, err = io.Copy(io.Discard, raw)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("raw peer: connection still open after garbage")
	}
}

// TestIdleSessionStaysUp: with smux keepalive off, a session on which
// nothing is written survives; only Close or a dead connection ends it.
func TestIdleSessionStaysUp(t *testing.T) {
	tr := build(t)
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), spitest.TransportWait)
	defer cancel()
	c, err := tr.Dial(ctx, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	select {
	case <-c.Done():
		t.Fatal("idle consumer session died")
	case <-p.Done():
		t.Fatal("idle provider session died")
	case <-time.After(300 * time.Millisecond):
	}
}

func BenchmarkStream100B(b *testing.B) { spitest.BenchmarkTransport(b, smux.Builder{}) }

// TestLargeStreamDoesNotBlockOthers: a 4 MiB transfer the peer does not read
// yet fills only its own stream's window (a quarter of smux.buffer); small
// exchanges on another stream of the same session go on meanwhile. Both
// are streams after the primary one (the exchange's long-lived stream,
// which has no window of its own: TestPrimaryStream*), as the exchange's
// streams of their own are.
func TestLargeStreamDoesNotBlockOthers(t *testing.T) {
	tr := build(t)
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), spitest.TransportWait)
	defer cancel()
	c, err := tr.Dial(ctx, l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := c.Open(); err != nil { // the primary stream
		t.Fatal(err)
	}
	if _, err := p.Accept(); err != nil {
		t.Fatal(err)
	}

	big, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	pbig, err := p.Accept() // accepted, not read until the end
	if err != nil {
		t.Fatal(err)
	}
	bigDone := make(chan error, 1)
	go func() {
		_, err := big.Write(make([]byte, 4<<20))
		bigDone <- err
	}()

	small, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	psmall, err := p.Accept()
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(psmall, psmall)
	deadline := time.Now().Add(spitest.TransportWait)
	small.(interface{ SetDeadline(time.Time) error }).SetDeadline(deadline)
	for i := range 100 {
		msg := []byte{byte(i), 1, 2, 3}
		if _, err := small.Write(msg); err != nil {
			t.Fatalf("small write %d beside a stalled 4 MiB stream: %v", i, err)
		}
		if _, err := io.ReadFull(small, msg); err != nil {
			t.Fatalf("small read %d beside a stalled 4 MiB stream: %v", i, err)
		}
	}
	select {
	case err := <-bigDone:
		t.Fatalf("4 MiB write finished (%v) although the peer read nothing: no flow control?", err)
	default:
	}
	// Now the provider reads the large stream and the write completes.
	go io.Copy(io.Discard, pbig)
	select {
	case err := <-bigDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(spitest.TransportWait):
		t.Fatal("4 MiB write did not finish once read")
	}
}
