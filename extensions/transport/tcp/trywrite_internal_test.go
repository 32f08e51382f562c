package tcp

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TryWrite never waits: against a peer that does not read it takes bytes
// until the socket's buffers are full, then returns 0 at once; once the
// peer reads, everything taken arrives in order.
func TestTryWrite_NeverWaits(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	defer peer.Close()
	s := newSession(c, false)
	defer s.Close()
	st, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	tw, ok := st.(spi.TryWriter)
	if !ok {
		t.Fatal("a stream on a plain socket is no spi.TryWriter")
	}
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	var sent int
	deadline := time.Now().Add(10 * time.Second)
	for {
		start := time.Now()
		n, err := tw.TryWrite(chunk)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("TryWrite waited %v", d)
		}
		sent += n
		if n == 0 {
			break // the buffers are full
		}
		if time.Now().After(deadline) {
			t.Fatalf("buffers never filled after %d bytes", sent)
		}
		chunk = append(chunk[n:], chunk[:n]...) // keep the byte sequence continuous
	}
	got := make([]byte, sent)
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		if b != byte(i) {
			t.Fatalf("byte %d = %d, want %d", i, b, byte(i))
		}
	}
}
