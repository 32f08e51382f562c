package cli

import (
	"net/netip"
	"syscall"
	"testing"
)

// reservedAddr returns a 127.0.0.1 address whose port the test holds
// until it ends: a TCP socket bound there with SO_REUSEADDR that never
// listens. Nothing answers on it, so a dial is refused at once; Linux
// gives the port to no outgoing connection and to no listener on port 0,
// of this test binary or another, while serve --listen on it still
// binds (Go's listeners set SO_REUSEADDR, which binds beside a bound
// socket that does not listen), and binds again after a restart. For a
// test that needs a fixed port or an address nothing listens on: a port
// picked by listening on port 0 and closing the listener was free for
// any outgoing connection of a test running beside it until serve bound
// it (a CI run failed on "address already in use").
func reservedAddr(t *testing.T) string {
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
		t.Fatalf("reservedAddr: socket bound to %T, want an IPv4 address", sa)
	}
	return netip.AddrPortFrom(netip.AddrFrom4(in4.Addr), uint16(in4.Port)).String()
}
