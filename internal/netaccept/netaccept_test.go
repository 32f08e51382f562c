package netaccept

import (
	"errors"
	"net"
	"testing"
)

// flaky fails once with a temporary error, then accepts.
type flaky struct {
	net.Listener
	failed bool
}

type tempErr struct{}

func (tempErr) Error() string   { return "accept: too many open files" }
func (tempErr) Timeout() bool   { return false }
func (tempErr) Temporary() bool { return true }

func (f *flaky) Accept() (net.Conn, error) {
	if !f.failed {
		f.failed = true
		return nil, tempErr{}
	}
	return f.Listener.Accept()
}

func TestRetriesTemporaryErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			c.Close()
		}
	}()
	c, err := Accept(&flaky{Listener: l})
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	c.Close()
}

func TestClosedListenerEnds(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := Accept(l); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("err = %v, want net.ErrClosed", err)
	}
}
