package testproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// echoServer echoes lines until the test ends and returns its address.
func echoServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return l.Addr().String()
}

// roundTrip writes a line on c and reads it back within d.
func roundTrip(c net.Conn, r *bufio.Reader, d time.Duration) error {
	c.SetDeadline(time.Now().Add(d))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err := r.ReadString('\n')
	return err
}

func dial(t *testing.T, p *Proxy) (net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func TestFaults(t *testing.T) {
	p := New(t, echoServer(t))
	c, r := dial(t, p)
	if err := roundTrip(c, r, 5*time.Second); err != nil {
		t.Fatalf("forwarding: %v", err)
	}

	p.Pause(true)
	if err := roundTrip(c, r, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("paused: got %v, want a timeout", err)
	}
	p.Pause(false) // the held line goes through
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("after the pause: %v", err)
	}

	p.Down()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err != io.EOF {
		t.Fatalf("down: read %v, want EOF", err)
	}
	if _, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Fatal("down: dial succeeded")
	}
	p.Up()
	c, r = dial(t, p)
	if err := roundTrip(c, r, 5*time.Second); err != nil {
		t.Fatalf("up again: %v", err)
	}

	p.Refuse(true)
	p.Cut()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err != io.EOF {
		t.Fatalf("cut: read %v, want EOF", err)
	}
	c, r = dial(t, p) // accepted by the listener, closed by the proxy
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err != io.EOF {
		t.Fatalf("refused: read %v, want EOF", err)
	}
	p.Refuse(false)
	if n := len(p.Accepts()); n != 2 {
		t.Fatalf("%d connections forwarded, want 2", n)
	}

	c, r = dial(t, p)
	p.BlackHole()
	if err := roundTrip(c, r, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("black hole: got %v, want a timeout (no answer, no close)", err)
	}
}

func TestConnectDelay(t *testing.T) {
	p := New(t, echoServer(t))
	p.SetConnectDelay(300 * time.Millisecond)
	start := time.Now()
	c, r := dial(t, p)
	if err := roundTrip(c, r, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Fatalf("first answer after %v, want at least the 300ms connect delay", d)
	}
}
