package testproxy

import (
	"bufio"
	"errors"
	"net"
	"os"
	"testing"
	"time"
)

// Unreachable: a forwarded connection goes silent and stays open, a new
// dial times out (no SYN-ACK, no RST); off, new dials are forwarded and
// the paused connection carries what it held.
func TestUnreachableDialsTimeOutAndHeal(t *testing.T) {
	p := New(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if err := roundTrip(c, r, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Unreachable(true)
	if err := roundTrip(c, r, 300*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("round trip through the dark path: %v, want a timeout", err)
	}
	start := time.Now()
	d, err := net.DialTimeout("tcp", p.Addr(), 300*time.Millisecond)
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		if d != nil {
			d.Close()
		}
		t.Fatalf("dial through the dark path: %v after %v, want a timeout", err, time.Since(start))
	}
	p.Unreachable(false)
	d, err = net.DialTimeout("tcp", p.Addr(), 2*time.Second)
	if err != nil {
		t.Fatalf("dial after the heal: %v", err)
	}
	defer d.Close()
	if err := roundTrip(d, bufio.NewReader(d), 2*time.Second); err != nil {
		t.Fatalf("round trip after the heal: %v", err)
	}
}
