package tcp

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// rawPair returns the stream of a session over a real loopback TCP
// connection, and the connection's other end.
func rawPair(t *testing.T) (*stream, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	s := newSession(c, false)
	if s.raw == nil {
		t.Fatal("a loopback TCP connection has no raw socket")
	}
	t.Cleanup(func() { s.Close(); peer.Close() })
	ts, ok := s.newStream().(*tryStream)
	if !ok {
		t.Fatal("a plain socket's stream is no tryStream")
	}
	if _, ok := ts.io.(*rawIO); !ok {
		t.Fatalf("a plain socket's stream reads and writes through %T, want *rawIO", ts.io)
	}
	return ts.stream, peer
}

// TestRawIO_LargeWriteToASlowReaderArrivesWhole: a write far larger than
// the socket's buffers waits for the peer (EAGAIN, then the poller) and
// delivers every byte in order.
func TestRawIO_LargeWriteToASlowReaderArrivesWhole(t *testing.T) {
	st, peer := rawPair(t)
	want := make([]byte, 8<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		time.Sleep(100 * time.Millisecond) // the writer fills the buffers first
		b, _ := io.ReadAll(io.LimitReader(peer, int64(len(want))))
		got <- b
	}()
	n, err := st.Write(want)
	if err != nil || n != len(want) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(want))
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %d bytes, not the %d written in order", len(b), len(want))
	}
}

// TestRawIO_ReadDeadlineEOFAndData: a read deadline returns
// os.ErrDeadlineExceeded and leaves the session alive; data and the
// peer's close read as net.Conn's would.
func TestRawIO_ReadDeadlineEOFAndData(t *testing.T) {
	st, peer := rawPair(t)
	_ = st.s.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	buf := make([]byte, 16)
	if n, err := st.Read(buf); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline = %d, %v; want 0 and os.ErrDeadlineExceeded", n, err)
	}
	if st.s.dead() {
		t.Fatal("a read deadline killed the session")
	}
	_ = st.s.conn.SetReadDeadline(time.Time{})
	if _, err := peer.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Read(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Read = %q, %v; want \"hello\", nil", buf[:n], err)
	}
	peer.Close()
	if n, err := st.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("Read after the peer closed = %d, %v; want 0, io.EOF", n, err)
	}
	if !st.s.dead() {
		t.Fatal("the end of the stream left the session alive")
	}
	if _, err := st.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write on the closed session = %v; want net.ErrClosed", err)
	}
}
