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
