package smux_test

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// pair dials a session of tr and accepts it, and opens the primary stream
// (the consumer's first) and a second one, each with its provider end.
func pair(t *testing.T, tr spi.Transport) (cPrimary, pPrimary, cSecond, pSecond io.ReadWriteCloser) {
	t.Helper()
	c, p := spitest.Pair(t, tr)
	cPrimary, pPrimary = spitest.StreamPair(t, c, p)
	cSecond, pSecond = spitest.StreamPair(t, c, p)
	return
}

func buildBuffer(t *testing.T, buffer string) spi.Transport {
	t.Helper()
	tr, err := smux.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0/x?smux.buffer=" + buffer))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// pattern returns n bytes of the sequence i*7+seed starting at off.
func pattern(seed byte, off, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((off+i)*7) + seed
	}
	return b
}

// readAll reads want bytes from r and checks they are the pattern.
func readAll(t *testing.T, r io.Reader, seed byte, want int, name string) {
	t.Helper()
	got := make([]byte, want)
	if _, err := io.ReadFull(r, got); err != nil {
		t.Errorf("%s: read %d bytes: %v", name, want, err)
		return
	}
	if !bytes.Equal(got, pattern(seed, 0, want)) {
		t.Errorf("%s: the %d bytes read are not the ones written", name, want)
	}
}

// readBoth reads the patterns of both streams at once (each holds up the
// other's writer until read: they share the connection).
func readBoth(t *testing.T, primary io.Reader, pSeed byte, pLen int, second io.Reader, sSeed byte, sLen int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		readAll(t, second, sSeed, sLen, "second stream")
	}()
	readAll(t, primary, pSeed, pLen, "primary stream")
	<-done
}

// TestPrimaryStreamTryWriteKeepsFramesWhole: the primary stream (the
// consumer's first) writes its frames straight to the socket, beside
// smux's own writer, which another stream's writes go through at the same
// time. TryWrite until the peer, reading nothing, stops taking bytes
// (frames cut part-way are finished later by the connection), then the
// peer reads both streams: every byte of each arrives, in order, and the
// stream goes on working.
func TestPrimaryStreamTryWriteKeepsFramesWhole(t *testing.T) {
	cPrimary, pPrimary, cSecond, pSecond := pair(t, buildBuffer(t, "256KiB"))
	tw, ok := cPrimary.(spi.TryWriter)
	if !ok {
		t.Fatalf("primary stream %T is no spi.TryWriter on a plain socket", cPrimary)
	}
	if _, ok := cSecond.(spi.TryWriter); ok {
		t.Fatalf("second stream %T is a spi.TryWriter: it goes through smux", cSecond)
	}

	const second = 1 << 20
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // beside the primary stream, through smux's writer
		defer wg.Done()
		for off := 0; off < second; off += 10 << 10 {
			if _, err := cSecond.Write(pattern(2, off, 10<<10)); err != nil {
				t.Errorf("second stream write: %v", err)
				return
			}
		}
	}()

	written, short := 0, 0
	deadline := time.Now().Add(spitest.TransportWait)
	for short < 50 && time.Now().Before(deadline) {
		size := 50 << 10 // two frames
		if written == 0 {
			size = 1 << 20 // 32 frames: more than a connection keeps headers for
		}
		chunk := pattern(1, written, size)
		n, err := tw.TryWrite(chunk)
		if err != nil {
			t.Fatal(err)
		}
		if n < len(chunk) {
			short++
			if n > 0 && n%(32<<10) != 0 && n != len(chunk) {
				t.Logf("TryWrite took %d of %d bytes", n, len(chunk))
			}
			time.Sleep(time.Millisecond)
		}
		written += n
	}
	if short == 0 {
		t.Fatalf("TryWrite took all %d bytes although the peer read nothing", written)
	}

	readBoth(t, pPrimary, 1, written, pSecond, 2, second)
	wg.Wait()

	// The stream goes on: a blocking Write and an answer.
	if _, err := cPrimary.Write([]byte("after")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	if _, err := io.ReadFull(pPrimary, got); err != nil || string(got) != "after" {
		t.Fatalf("after the backlog: read %q, %v", got, err)
	}
}

// TestPrimaryStreamBoundedBySessionBuffer: the primary stream has no send
// window of its own; what bounds it is the peer's session buffer
// (smux.buffer), whose smux then stops reading the connection. A write of
// far more than that and the socket buffers hold does not finish while the
// peer reads nothing, and finishes with every byte once it reads.
func TestPrimaryStreamBoundedBySessionBuffer(t *testing.T) {
	cPrimary, pPrimary, _, _ := pair(t, buildBuffer(t, "256KiB"))
	const size = 64 << 20
	data := pattern(3, 0, size)
	done := make(chan error, 1)
	go func() {
		_, err := cPrimary.Write(data)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a %d-byte write finished (%v) while the peer read nothing", size, err)
	case <-time.After(300 * time.Millisecond):
	}
	readAll(t, pPrimary, 3, size, "primary stream")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(spitest.TransportWait):
		t.Fatal("the write did not finish once read")
	}
}

// TestPrimaryStreamWriteAfterClose: a closed primary stream's writes
// fail with io.ErrClosedPipe, as smux's do.
func TestPrimaryStreamWriteAfterClose(t *testing.T) {
	cPrimary, _, _, _ := pair(t, build(t))
	cPrimary.Close()
	if _, err := cPrimary.Write([]byte("x")); err != io.ErrClosedPipe {
		t.Fatalf("Write after Close: %v, want io.ErrClosedPipe", err)
	}
	if _, err := cPrimary.(spi.TryWriter).TryWrite([]byte("x")); err != io.ErrClosedPipe {
		t.Fatalf("TryWrite after Close: %v, want io.ErrClosedPipe", err)
	}
}

// TestTLSFramesArriveWhole: under TLS, frames are copied into one TLS
// write (writeTLS) — the primary stream's and smux's sender's, on two
// streams at once, across the 64 KiB chunk boundary: every byte of each
// arrives in order. The primary stream is no spi.TryWriter there.
func TestTLSFramesArriveWhole(t *testing.T) {
	ca := tlsconftest.NewCA(t, "test-ca")
	certFile, keyFile := ca.Issue(t, "provider")
	tr, err := smux.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0/x?tls=true&tls.cert=" + certFile + "&tls.key=" + keyFile + "&tls.ca=" + ca.CertFile))
	if err != nil {
		t.Fatal(err)
	}
	cPrimary, pPrimary, cSecond, pSecond := pair(t, tr)
	if _, ok := cPrimary.(spi.TryWriter); ok {
		t.Fatal("primary stream under TLS is a spi.TryWriter")
	}
	const primary, second = 300 << 10, 1 << 20
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for off := 0; off < primary; off += 100 << 10 {
			if _, err := cPrimary.Write(pattern(4, off, 100<<10)); err != nil {
				t.Errorf("primary stream write: %v", err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		if _, err := cSecond.Write(pattern(5, 0, second)); err != nil {
			t.Errorf("second stream write: %v", err)
		}
	}()
	readBoth(t, pPrimary, 4, primary, pSecond, 5, second)
	wg.Wait()
}

// TestPrimaryStreamKeepsTheWindow: both ends write 32 MiB on the primary
// stream at once and read what the other writes, one of them only after
// 300 ms, over sessions whose buffer is the smallest (256 KiB). The
// primary stream keeps the peer's send window (window.go): without it the
// late reader's session buffer filled, its smux stopped reading the
// connection, each end's write then held the connection's write lock on a
// full socket, the window updates its reads must send could not go out,
// and neither end moved again (tester56: -c 1000 --req 60KiB over smux,
// every call CLIENT_TIMEOUT).
func TestPrimaryStreamKeepsTheWindow(t *testing.T) {
	cPrimary, pPrimary, _, _ := pair(t, buildBuffer(t, "256KiB"))
	const size = 32 << 20 // beyond what loopback's socket buffers hold
	var wg sync.WaitGroup
	wg.Add(4)
	write := func(w io.Writer, seed byte, name string) {
		defer wg.Done()
		if _, err := w.Write(pattern(seed, 0, size)); err != nil {
			t.Errorf("%s write: %v", name, err)
		}
	}
	go write(cPrimary, 6, "consumer")
	go write(pPrimary, 7, "provider")
	go func() {
		defer wg.Done()
		readAll(t, cPrimary, 7, size, "consumer's read")
	}()
	go func() {
		defer wg.Done()
		time.Sleep(300 * time.Millisecond) // a provider whose reader stopped a while
		readAll(t, pPrimary, 6, size, "provider's read")
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(4 * spitest.TransportWait):
		t.Fatal("32 MiB each way did not arrive in 20 s: the connection is stuck")
	}
}
