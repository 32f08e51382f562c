package smux

import (
	"io"
	"net"
	"testing"
)

// TestReadAhead_ReleasesWhenDrained: small reads are served from one
// read-ahead buffer, which goes back to the pool once its bytes are all
// read; the end of the stream is io.EOF and reported to the session.
func TestReadAhead_ReleasesWhenDrained(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	peer, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	w := newWatchedConn(c, func() { failed++ })
	defer w.Close()
	if w.ra.raw == nil {
		t.Skip("no raw socket on this platform")
	}
	if _, err := peer.Write([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(w, hdr[:]); err != nil || string(hdr[:]) != "0123" {
		t.Fatalf("first read = %q, %v; want \"0123\"", hdr[:], err)
	}
	if w.ra.buf == nil || w.ra.w-w.ra.r != 6 {
		t.Fatalf("after a 4-byte read of 10 bytes sent the read-ahead holds %d bytes (buffer %v), want 6", w.ra.w-w.ra.r, w.ra.buf != nil)
	}
	rest := make([]byte, 6)
	if _, err := io.ReadFull(w, rest); err != nil || string(rest) != "456789" {
		t.Fatalf("second read = %q, %v; want \"456789\"", rest, err)
	}
	if w.ra.buf != nil {
		t.Fatal("drained read-ahead still holds its buffer")
	}
	peer.Close()
	if n, err := w.Read(hdr[:]); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed = %d, %v; want 0, io.EOF", n, err)
	}
	if failed != 1 || w.ra.buf != nil {
		t.Fatalf("after EOF: onFail called %d times, buffer held %v; want 1, false", failed, w.ra.buf != nil)
	}
}
