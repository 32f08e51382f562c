package smux

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// TestReadAhead_ReleasesWhenDrained: smux's receiver, reading a provider's
// socket before the primary stream's first read, takes a batch of frames
// in one read-ahead buffer, serves its small reads from it and gives the
// buffer back to the pool once its bytes are all read; the end of the
// stream is io.EOF and reported to the session once.
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
	if w.ra.raw == nil {
		c.Close()
		t.Skip("no raw socket on this platform")
	}
	w.dm = newDemux(false, 64<<10)
	w.watch.dm = w.dm
	defer w.Close()

	// A data frame of stream 5 (no SYN named a primary stream: smux's) with
	// 10 bytes, sent in one write.
	frame := make([]byte, frameHeaderLen, frameHeaderLen+10)
	frame[0], frame[1] = smuxVersion, cmdPSH
	binary.LittleEndian.PutUint16(frame[2:], 10)
	binary.LittleEndian.PutUint32(frame[4:], 5)
	frame = append(frame, "0123456789"...)
	if _, err := peer.Write(frame); err != nil {
		t.Fatal(err)
	}
	hdr := make([]byte, frameHeaderLen)
	if _, err := io.ReadFull(w, hdr); err != nil || string(hdr) != string(frame[:frameHeaderLen]) {
		t.Fatalf("header read = %x, %v; want %x", hdr, err, frame[:frameHeaderLen])
	}
	if w.ra.buf == nil || w.ra.w-w.ra.r != 10 {
		t.Fatalf("after the 8-byte header of 18 bytes sent the read-ahead holds %d bytes (buffer %v), want 10", w.ra.w-w.ra.r, w.ra.buf != nil)
	}
	data := make([]byte, 10)
	if _, err := io.ReadFull(w, data); err != nil || string(data) != "0123456789" {
		t.Fatalf("data read = %q, %v; want \"0123456789\"", data, err)
	}
	if w.ra.buf != nil {
		t.Fatal("drained read-ahead still holds its buffer")
	}
	peer.Close()
	if n, err := w.Read(hdr); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed = %d, %v; want 0, io.EOF", n, err)
	}
	if failed != 1 || w.ra.buf != nil {
		t.Fatalf("after EOF: onFail called %d times, buffer held %v; want 1, false", failed, w.ra.buf != nil)
	}
}
