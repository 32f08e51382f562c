package smux_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// TestWithdrawBeforeAnyByteWasHanded (fix-bj): a stream this side opened
// can be withdrawn (spi.Withdrawer) while none of its bytes has been
// handed to smux — its Write waits for the session's credit, spent by two
// streams the provider does not read yet — and then its Write returns
// spi.ErrWithdrawn and the provider reads the stream end empty, while a
// stream that wrote its window cannot be withdrawn. The exchange answers
// such a large request's timeout CLIENT_TIMEOUT, never sent. Buffers of
// 1 MiB: windows of 256 KiB, a credit of 512 KiB.
func TestWithdrawBeforeAnyByteWasHanded(t *testing.T) {
	c, p := spitest.Pair(t, buildBuffer(t, "1MiB"))
	cPrimary, pPrimary := spitest.StreamPair(t, c, p)
	go func() { _, _ = cPrimary.Write([]byte("hello")) }()
	if _, err := io.ReadFull(pPrimary, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the provider's window update arrives

	const window = 256 << 10
	open := func() io.ReadWriteCloser {
		t.Helper()
		st, err := c.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := st.(spi.Withdrawer); !ok {
			t.Fatalf("stream %T does not implement spi.Withdrawer", st)
		}
		return st
	}
	// two streams of two windows each: one window each goes out, the
	// rest waits for the provider to read them
	var early []io.ReadWriteCloser
	for i := range 2 {
		st := open()
		early = append(early, st)
		go func() { _, _ = st.Write(pattern(byte(1+i), 0, 2*window)) }()
	}
	time.Sleep(200 * time.Millisecond)
	third := open()
	errc := make(chan error, 1)
	go func() {
		_, err := third.Write(pattern(3, 0, window))
		errc <- err
	}()
	select {
	case err := <-errc:
		t.Fatalf("third stream's write returned %v with the credit spent; want it to wait", err)
	case <-time.After(200 * time.Millisecond):
	}

	if early[0].(spi.Withdrawer).Withdraw() {
		t.Fatal("Withdraw of a stream that wrote a window succeeded")
	}
	if !third.(spi.Withdrawer).Withdraw() {
		t.Fatal("Withdraw of a stream waiting for credit, nothing handed, failed")
	}
	if !third.(spi.Withdrawer).Withdraw() {
		t.Fatal("a second Withdraw reported false")
	}
	select {
	case err := <-errc:
		if !errors.Is(err, spi.ErrWithdrawn) {
			t.Fatalf("withdrawn stream's write: %v, want spi.ErrWithdrawn", err)
		}
	case <-time.After(spitest.TransportWait):
		t.Fatal("withdrawn stream's write did not return")
	}
	if _, err := third.Write([]byte("x")); !errors.Is(err, spi.ErrWithdrawn) {
		t.Fatalf("write after Withdraw: %v, want spi.ErrWithdrawn", err)
	}
	_ = third.Close()

	// The provider reads: the two early streams whole, the withdrawn one
	// empty.
	ps := acceptN(t, p, 3)
	for i := range 2 {
		readAll(t, ps[i], byte(1+i), 2*window, "early stream")
	}
	done := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(ps[2])
		done <- b
	}()
	select {
	case b := <-done:
		if len(b) != 0 {
			t.Fatalf("provider read %d bytes of the withdrawn stream, want none", len(b))
		}
	case <-time.After(spitest.TransportWait):
		t.Fatal("the withdrawn stream never ended on the provider")
	}
}
