package smux_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/airnode/airnode/spi/spitest"
)

// The primary stream reads the socket itself (demux.go). These tests run
// what smux used to do for it: window updates for what it reads, the
// socket read for the other streams while its reader is away, its end.

// TestPrimaryStreamReadsManyWindowsEachWay: the primary stream's reader
// sends the window updates smux would (the peer's writes stop after one
// window without them): 1 MiB buffers (256 KiB windows), 2 MiB each way
// at once, read 2 KiB at a time as the exchange does.
func TestPrimaryStreamReadsManyWindowsEachWay(t *testing.T) {
	c, p := spitest.Pair(t, buildBuffer(t, "1MiB"))
	cs, ps := spitest.StreamPair(t, c, p)
	const size = 2 << 20
	done := make(chan struct{}, 4)
	write := func(w io.Writer, seed byte) {
		if _, err := w.Write(pattern(seed, 0, size)); err != nil {
			t.Errorf("write: %v", err)
		}
		done <- struct{}{}
	}
	read := func(r io.Reader, seed byte) {
		got := make([]byte, 0, size)
		buf := make([]byte, 2<<10)
		for len(got) < size {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				t.Errorf("read after %d bytes: %v", len(got), err)
				break
			}
		}
		if string(got) != string(pattern(seed, 0, size)) {
			t.Errorf("the %d bytes read are not the ones written", len(got))
		}
		done <- struct{}{}
	}
	go write(cs, 1)
	go write(ps, 2)
	go read(ps, 1)
	go read(cs, 2)
	for range 4 {
		select {
		case <-done:
		case <-time.After(4 * spitest.TransportWait):
			t.Fatal("2 MiB each way on the primary stream: not within 4 x TransportWait: the window updates did not come")
		}
	}
}

// TestPrimaryStreamDataBeforeItsFirstReadKeepsItsOrder: what the consumer
// writes on the primary stream before the provider accepts it (smux's
// receiver reads the socket then) comes before what follows, beside
// another stream's data.
func TestPrimaryStreamDataBeforeItsFirstReadKeepsItsOrder(t *testing.T) {
	c, p := spitest.Pair(t, buildBuffer(t, "1MiB"))
	const size = 300 << 10
	cs, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Write(pattern(4, 0, size/2)); err != nil {
		t.Fatal(err)
	}
	other, err := c.Open()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if _, err := other.Write(pattern(5, 0, size)); err != nil {
			t.Errorf("other stream: write: %v", err)
		}
		if _, err := cs.Write(pattern(4, size/2, size/2)); err != nil {
			t.Errorf("primary stream: write: %v", err)
		}
	}()
	time.Sleep(100 * time.Millisecond) // all of it on its way before Accept
	streams := acceptN(t, p, 2)
	got := make(chan struct{})
	go func() {
		defer close(got)
		readAll(t, streams[1], 5, size, "other stream")
	}()
	readAll(t, streams[0], 4, size, "primary stream")
	within(t, got, spitest.TransportWait, "the other stream's data")
}

// TestWindowUpdatesAreReadWhilePrimaryReaderIsAway: a provider whose
// primary stream's reader stopped (the exchange stops reading while its
// answers wait unsent) must still read the window updates that let those
// answers go: smux's receiver reads the socket for it after takeoverAfter.
// The provider writes 4 windows on the primary stream and its reader is
// away; the consumer reads them all.
func TestWindowUpdatesAreReadWhilePrimaryReaderIsAway(t *testing.T) {
	c, p := spitest.Pair(t, buildBuffer(t, "1MiB"))
	cs, ps := spitest.StreamPair(t, c, p)
	go func() { _, _ = cs.Write([]byte("hello")) }()
	if _, err := io.ReadFull(ps, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	const size = 1 << 20
	go func() {
		if _, err := ps.Write(pattern(6, 0, size)); err != nil {
			t.Errorf("provider: write: %v", err)
		}
	}()
	got := make(chan struct{})
	go func() {
		defer close(got)
		readAll(t, cs, 6, size, "the provider's answers")
	}()
	within(t, got, spitest.TransportWait, "4 windows while the provider's reader is away")
}

// TestPrimaryStreamEndsAfterItsData: the peer's close of the primary
// stream reads as io.EOF after the data it wrote first; this side's close
// stops a reader waiting for data.
func TestPrimaryStreamEndsAfterItsData(t *testing.T) {
	c, p := spitest.Pair(t, buildBuffer(t, "1MiB"))
	cs, ps := spitest.StreamPair(t, c, p)
	if _, err := cs.Write([]byte("last words")); err != nil {
		t.Fatal(err)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(ps)
	if err != nil || string(all) != "last words" {
		t.Fatalf("provider read %q, %v; want the data, then io.EOF", all, err)
	}

	c2, p2 := spitest.Pair(t, buildBuffer(t, "1MiB"))
	cs2, _ := spitest.StreamPair(t, c2, p2)
	ended := make(chan error, 1)
	go func() {
		_, err := cs2.Read(make([]byte, 8))
		ended <- err
	}()
	time.Sleep(50 * time.Millisecond) // it waits on the socket
	_ = cs2.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("read after Close: %v; want io.ErrClosedPipe", err)
		}
	case <-time.After(spitest.TransportWait):
		t.Fatal("a reader waiting on the primary stream: not stopped by its Close")
	}
	// the session still works: the socket was handed back
	o, err := c2.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Write(pattern(7, 0, 100)); err != nil {
		t.Fatal(err)
	}
	readAll(t, acceptN(t, p2, 1)[0], 7, 100, "a stream after the primary stream's close")
}
