package testproxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// server serves each connection it accepts with handle until the test
// ends, and returns its address.
func server(t *testing.T, handle func(net.Conn)) string {
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
			go func() { defer c.Close(); handle(c) }()
		}
	}()
	return l.Addr().String()
}

// echoServer echoes until the test ends and returns its address.
func echoServer(t *testing.T) string {
	return server(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
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

// sinkServer accepts connections that it writes send bytes to, then reads
// until EOF; it returns its address.
func sinkServer(t *testing.T, send int) string {
	return server(t, func(c net.Conn) {
		if _, err := c.Write(make([]byte, send)); err == nil {
			_, _ = io.Copy(io.Discard, c)
		}
	})
}

// TestSetRate: 200 KB at 200 KB/s take about a second each way (the
// sockets' buffers hold the rest meanwhile), and no limit is fast again.
func TestSetRate(t *testing.T) {
	const n, rate = 200_000, 200_000
	p := New(t, sinkServer(t, n))
	p.SetRate(rate, rate)
	c, _ := dial(t, p)
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, n)); err != nil {
		t.Fatalf("down: %v", err)
	}
	if d := time.Since(start); d < 800*time.Millisecond || d > 3*time.Second {
		t.Fatalf("down: %d bytes at %d B/s took %v, want about 1s", n, rate, d)
	}
	// up: the writes return once the buffers hold the rest, so measure
	// what has gone through: the server's answer comes after its read.
	echo := New(t, echoServer(t))
	echo.SetRate(rate, 0)
	e, r := dial(t, echo)
	line := append(bytes.Repeat([]byte("x"), n-1), '\n')
	start = time.Now()
	go e.Write(line)
	e.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("up: %v", err)
	}
	if d := time.Since(start); d < 800*time.Millisecond || d > 3*time.Second {
		t.Fatalf("up: %d bytes at %d B/s took %v, want about 1s", n, rate, d)
	}
	echo.SetRate(0, 0)
	start = time.Now()
	go e.Write(line)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatalf("unlimited: %v", err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Fatalf("unlimited: %d bytes took %v", n, d)
	}
}

// TestBlackHoleStallsWrites: a sender's writes into a black hole stop
// once the buffers are full, as on a path that acknowledges nothing.
func TestBlackHoleStallsWrites(t *testing.T) {
	p := New(t, sinkServer(t, 0))
	c, _ := dial(t, p)
	if _, err := c.Write([]byte("before")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the pipe is back in its read
	p.BlackHole()
	c.SetWriteDeadline(time.Now().Add(time.Second))
	const total = 256 << 20
	n, err := c.Write(make([]byte, total))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("wrote %d of %d bytes into a black hole: %v, want a stalled write", n, total, err)
	}
	t.Logf("the black hole took %d bytes (socket buffers) before the write stalled", n)
}
