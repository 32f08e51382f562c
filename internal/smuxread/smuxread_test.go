package smuxread_test

import (
	"encoding/binary"
	"net"
	"runtime"
	"testing"

	"github.com/xtaci/smux"

	"github.com/airnode/airnode/internal/smuxread"
)

// lastWordsThenClose opens a smux stream to a peer that answers with one
// data frame and closes the connection in the same breath (no FIN frame
// for the stream), and returns what read (smux's own Read or
// smuxread.Read) got before its first error.
func lastWordsThenClose(t *testing.T, read func(*smux.Stream, []byte) (int, error)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	cfg := smux.DefaultConfig() // version 1
	cfg.KeepAliveDisabled = true
	client, err := smux.Client(cc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	st, err := client.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	// the reader waits in smux's Read before anything comes
	type result struct{ got string }
	done := make(chan result)
	go func() {
		var got []byte
		buf := make([]byte, 16)
		for {
			n, err := read(st, buf)
			got = append(got, buf[:n]...)
			if err != nil {
				done <- result{string(got)}
				return
			}
		}
	}()
	runtime.Gosched()
	// The peer: one PSH frame (version 1, cmd 2, length, stream id) and
	// the close, in one goroutine, so that the data and the end of the
	// connection are both there when the client's receive loop runs.
	frame := []byte{1, 2, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint16(frame[2:], uint16(len("last")))
	binary.LittleEndian.PutUint32(frame[4:], st.ID())
	frame = append(frame, "last"...)
	if _, err := sc.Write(frame); err != nil {
		t.Fatal(err)
	}
	_ = sc.Close()
	return (<-done).got
}

// What the peer wrote before closing is read before the error. smux's own
// Read loses it only when its reader, between finding the buffer empty
// and waiting, is overtaken by the receive loop buffering the data and
// then seeing the close (its wait then picks either at random): rare, and
// not forced here; the count of its losses is logged. smuxread.Read must
// never lose it.
func TestReadGetsTheLastWordsBeforeTheError(t *testing.T) {
	runs := 2000
	if testing.Short() {
		runs = 200
	}
	lost := 0
	for range runs {
		if lastWordsThenClose(t, (*smux.Stream).Read) != "last" {
			lost++
		}
	}
	t.Logf("smux's own Read lost the last words in %d of %d runs", lost, runs)
	for i := range runs {
		if got := lastWordsThenClose(t, smuxread.Read); got != "last" {
			t.Fatalf("run %d: read %q before the error, want %q", i, got, "last")
		}
	}
}
