// Package testaddr gives tests a loopback address whose port they hold
// for their whole life, for a test that needs a fixed port (a provider
// restarted on its address) or an address nothing listens on (a refused
// dial). Linux only: it relies on how Linux treats a socket bound with
// SO_REUSEADDR that never listens.
package testaddr

import (
	"net/netip"
	"syscall"
	"testing"
)

// Reserved returns a 127.0.0.1 address whose port the test holds until
// it ends: a TCP socket bound there with SO_REUSEADDR that never listens,
// closed by t.Cleanup. Nothing answers on it, so a dial is refused at
// once; Linux gives the port to no outgoing connection and to no listener
// on port 0, of this test binary or another, while a listener on it
// still binds (Go's listeners set SO_REUSEADDR, which binds beside a
// bound socket that does not listen), and binds again after it was
// closed. A port picked by listening on port 0 and closing the listener
// is free for any outgoing connection of a test running beside it until
// it is bound again (a CI run failed on "address already in use"), and
// so is a fixed port between a listener's close and its restart. It
// fails the test if the socket cannot be made.
func Reserved(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("testaddr: socket bound to %T, want an IPv4 address", sa)
	}
	return netip.AddrPortFrom(netip.AddrFrom4(in4.Addr), uint16(in4.Port)).String()
}
