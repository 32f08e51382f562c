package smux_test

import (
	"io"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// acceptN accepts n streams on s, in order.
func acceptN(t *testing.T, s spi.Session, n int) []io.ReadWriteCloser {
	t.Helper()
	out := make([]io.ReadWriteCloser, n)
	for i := range out {
		st, err := s.Accept()
		if err != nil {
			t.Fatalf("accept stream %d: %v", i, err)
		}
		out[i] = st
	}
	return out
}

// within fails the test unless done closes within d.
func within(t *testing.T, done <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: not within %v: the connection is stuck", what, d)
	}
}

// answerArrives writes an answer of size bytes on a stream the provider
// p opens and fails the test unless the consumer c reads it whole within
// 20 s.
func answerArrives(t *testing.T, c, p spi.Session, size int, what string) {
	t.Helper()
	answerStream, err := p.Open()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if _, err := answerStream.Write(pattern(9, 0, size)); err != nil {
			t.Errorf("answer stream: write: %v", err)
		}
		_ = answerStream.Close()
	}()
	cAnswer, err := c.Accept()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		defer close(got)
		readAll(t, cAnswer, 9, size, "answer")
	}()
	within(t, got, 4*spitest.TransportWait, what)
}

// TestOpenedStreamsLeaveRoomForWindowUpdates: streams a consumer opens and
// its provider does not read yet (a provider whose readers stopped while
// its answers wait) must not fill the provider's session buffer, or its
// smux stops reading the connection and the consumer's window updates for
// a large answer never arrive (tester57's stall, `bench -c 64 --req 1MiB
// --mix-resp 2MiB`). Here the session buffer is 1 MiB (windows of
// 256 KiB), the consumer writes 2 MiB on 8 streams nobody reads, and the
// provider writes a 4 MiB answer: it must arrive. Before the credit it
// stopped after the first window.
func TestOpenedStreamsLeaveRoomForWindowUpdates(t *testing.T) {
	c, p := spitest.Pair(t, buildBuffer(t, "1MiB"))
	cPrimary, pPrimary := spitest.StreamPair(t, c, p)
	// the primary stream carries a little each way, as the exchange's hello
	go func() { _, _ = cPrimary.Write([]byte("hello")) }()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(pPrimary, buf); err != nil {
		t.Fatal(err)
	}

	const window, streams, answer = 256 << 10, 8, 4 << 20
	var writers sync.WaitGroup
	for i := range streams {
		st, err := c.Open()
		if err != nil {
			t.Fatal(err)
		}
		writers.Add(1)
		go func() {
			defer writers.Done()
			if _, err := st.Write(pattern(byte(i), 0, window)); err != nil {
				t.Errorf("request stream %d: write: %v", i, err)
			}
			_ = st.Close()
		}()
	}
	time.Sleep(200 * time.Millisecond) // the request streams' bytes are on their way

	answerArrives(t, c, p, answer, "a 4 MiB answer while 8 request streams wait unread")

	// The provider now reads the request streams, each on its own (as the
	// exchange does): every write completes.
	var readers sync.WaitGroup
	for i, st := range acceptN(t, p, streams) {
		readers.Add(1)
		go func() {
			defer readers.Done()
			readAll(t, st, byte(i), window, "request stream")
			_ = st.Close()
		}()
	}
	done := make(chan struct{})
	go func() { writers.Wait(); readers.Wait(); close(done) }()
	within(t, done, spitest.TransportWait, "the request streams' writes once read")
}

// TestRefusedStreamGivesItsCreditBack: a stream the provider closes
// without reading (the exchange refuses streams beyond its cap) counts
// nothing against the consumer's credit, so later streams are not held
// back by it.
func TestRefusedStreamGivesItsCreditBack(t *testing.T) {
	c, p := spitest.Pair(t, buildBuffer(t, "1MiB"))
	spitest.StreamPair(t, c, p)
	const window = 256 << 10

	refused, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	st := acceptN(t, p, 1)[0]
	_ = st.Close() // unread
	time.Sleep(100 * time.Millisecond)

	// the refused stream's write, and two more streams' that nobody reads
	// yet, take at most the credit (two windows) if the first counts nothing
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := refused.Write(pattern(1, 0, window)); err != nil {
			t.Errorf("write on the refused stream: %v", err)
		}
		for i := range 2 {
			s, err := c.Open()
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := s.Write(pattern(byte(2+i), 0, window)); err != nil {
				t.Errorf("stream %d: write: %v", i, err)
			}
		}
	}()
	within(t, done, spitest.TransportWait, "two windows on unread streams after a refused one")
	for i, st := range acceptN(t, p, 2) {
		readAll(t, st, byte(2+i), window, "request stream") // written in order
	}
}

// TestUnreadStreamLeavesRoomAtTheSmallestBuffer: smux lets a new stream
// send 256 KiB before the peer's first window update, whatever the peer's
// window, which is all of a 256 KiB session buffer: one request stream
// the provider did not read yet filled it, and a large answer then waited
// for window updates its smux no longer read (tester58: provider
// smux.buffer=256KiB, `bench -c 16 --req 1MiB`, 0 calls). A stream now
// writes one peer window (64 KiB here) before the peer begins to read it.
func TestUnreadStreamLeavesRoomAtTheSmallestBuffer(t *testing.T) {
	c, p := spitest.Pair(t, buildBuffer(t, "256KiB"))
	cPrimary, pPrimary := spitest.StreamPair(t, c, p)
	go func() { _, _ = cPrimary.Write([]byte("hello")) }()
	if _, err := io.ReadFull(pPrimary, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the primary stream's window update (64 KiB) arrives

	const request, answer = 1 << 20, 1 << 20
	st, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan struct{})
	go func() {
		defer close(written)
		if _, err := st.Write(pattern(3, 0, request)); err != nil {
			t.Errorf("request stream: write: %v", err)
		}
		_ = st.Close()
	}()
	time.Sleep(200 * time.Millisecond)

	answerArrives(t, c, p, answer, "a 1 MiB answer beside an unread 1 MiB request stream, 256 KiB buffers")

	readAll(t, acceptN(t, p, 1)[0], 3, request, "request stream")
	within(t, written, spitest.TransportWait, "the request stream's write once read")
}
