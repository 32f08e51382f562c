package spitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/spi"
)

// TransportWait bounds every wait of the transport suite: a session noticing
// its peer's death, Accept unblocking after Close, a failing dial. Real
// transports do each in milliseconds on loopback; the bound is generous for
// loaded CI machines.
const TransportWait = 5 * time.Second

// TestTransport runs the transport conformance suite against the transport
// b builds from a URL without transport keys. It checks for leaked
// goroutines at the end, so it must not run in parallel with other tests of
// its package.
//
// The transport need not be TCP. The suite listens on "127.0.0.1:0" (the
// transport maps that to its own kind of endpoint: a unix socket, a pipe)
// and dials whatever the listener's Addr().String() reports. It requires
// that string to be "host:port", host a loopback IP and the port the one
// picked for ":0" (1-65535), since the kernel takes the port it publishes
// for a provider (and the host, when the export names no IP) from it: a
// transport that is not TCP reports a net.Addr of its own whose String is
// host:port and resolves it back in Dial. When the listener's
// Addr().Network() is "tcp" (tcp4, tcp6), the suite also plays a dying
// peer and a hanging dial with raw TCP sockets and checks that session
// addresses are mirrored; for any other network those checks are skipped,
// saying why.
//
// The suite uses the transport as the exchange does: it keeps a reader on
// every stream it opens or accepts and, on the provider, an Accept loop, so
// a transport may notice a dead connection only when a read fails.
//
// Covered: listen on 127.0.0.1:0 and the Addr rule above; a second Listen
// on the bound address fails, a second one on 127.0.0.1:0 picks another
// port; dial and accept; bytes both ways on a
// stream; several concurrent streams and provider-opened streams (when
// Multiplexed), ErrNotMultiplexed and a blocking consumer Accept (when not);
// a 4 MiB transfer echoed back; Done closes on either side when the other
// closes and, over TCP, when a raw TCP peer resets or closes the
// connection; Accept (session and listener) unblocks with an error on
// Close (net.ErrClosed for the listener); Close twice returns nil; Open,
// Write and Read fail after Close; dialing a closed listener's address
// fails fast; Dial gives up when its context ends (over TCP: a dial hung
// in a full backlog); no goroutine outlives the sessions. A panic of the
// transport in a call the suite makes fails that subtest with the panic's
// value and stack.
func TestTransport(t *testing.T, b spi.TransportBuilder) {
	leaks := goleak.IgnoreCurrent()
	defer catch(t, "transport builder")
	if err := checkName(b.Name()); err != nil {
		t.Fatalf("transport builder: %v", err)
	}
	tr, err := b.Build(spi.MustParse("airnode://127.0.0.1:0/spitest.Transport"))
	if err != nil {
		t.Fatalf("%s: Build without transport keys: %v", b.Name(), err)
	}
	network := listenNetwork(tr)
	tcp := network == "tcp" || network == "tcp4" || network == "tcp6"
	rawTCP := func(t *testing.T) {
		t.Helper()
		if !tcp {
			t.Skipf("the listener's Addr().Network() is %q, not tcp: the suite plays a dying or hanging peer with raw TCP sockets only", network)
		}
	}

	run(t, "ListenAddr", "transport", func(t *testing.T) { testListenAddr(t, tr) })
	run(t, "Echo", "transport", func(t *testing.T) { testEcho(t, tr, tcp) })
	run(t, "Streams", "transport", func(t *testing.T) { testStreams(t, tr) })
	run(t, "LargeTransfer", "transport", func(t *testing.T) { testLargeTransfer(t, tr) })
	run(t, "ConsumerClose", "transport", func(t *testing.T) { testClose(t, tr, true) })
	run(t, "ProviderClose", "transport", func(t *testing.T) { testClose(t, tr, false) })
	run(t, "ProviderReset", "transport", func(t *testing.T) { rawTCP(t); testPeerDeathConsumer(t, tr, true) })
	run(t, "ProviderEOF", "transport", func(t *testing.T) { rawTCP(t); testPeerDeathConsumer(t, tr, false) })
	run(t, "ConsumerReset", "transport", func(t *testing.T) { rawTCP(t); testPeerDeathProvider(t, tr, true) })
	run(t, "ConsumerEOF", "transport", func(t *testing.T) { rawTCP(t); testPeerDeathProvider(t, tr, false) })
	run(t, "AcceptUnblocksOnClose", "transport", func(t *testing.T) { testAcceptUnblocks(t, tr) })
	run(t, "ListenerAcceptUnblocksOnClose", "transport", func(t *testing.T) { testListenerAcceptUnblocks(t, tr) })
	run(t, "DoubleClose", "transport", func(t *testing.T) { testDoubleClose(t, tr) })
	run(t, "UseAfterClose", "transport", func(t *testing.T) { testUseAfterClose(t, tr) })
	run(t, "DialRefused", "transport", func(t *testing.T) { testDialRefused(t, tr) })
	run(t, "DialContextDeadline", "transport", func(t *testing.T) { rawTCP(t); testDialDeadline(t, tr) })
	run(t, "DialContextCancelled", "transport", func(t *testing.T) { testDialCancelled(t, tr) })
	run(t, "NoGoroutineLeak", "transport", func(t *testing.T) { goleak.VerifyNone(t, leaks) })
}

// listenNetwork listens on 127.0.0.1:0 and returns the Network() of the
// listener's Addr ("" when Listen fails or Addr is nil: ListenAddr reports
// that).
func listenNetwork(tr spi.Transport) string {
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		return ""
	}
	defer l.Close()
	if a := l.Addr(); a != nil {
		return a.Network()
	}
	return ""
}

// checkListenAddr checks what the kernel needs of a listener's Addr: a
// String of "host:port", host a loopback address (the suite listens on
// 127.0.0.1) and the port picked (1-65535).
func checkListenAddr(a net.Addr) error {
	if a == nil {
		return errors.New("Addr() = nil, want the bound address")
	}
	const want = "want host:port with the port picked for 127.0.0.1:0 (1-65535): the kernel publishes the provider at the port of Addr().String(); a transport that is not TCP reports a net.Addr of its own whose String is host:port"
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return fmt.Errorf("Addr() = %T %q (network %q): %s", a, a.String(), a.Network(), want)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("Addr() = %T %q: port %q: %s", a, a.String(), port, want)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("Addr() = %T %q: host %q, want a loopback IP (the suite listens on 127.0.0.1:0)", a, a.String(), host)
	}
	return nil
}

// addrString is a.String(), "<nil>" for a nil a.
func addrString(a net.Addr) string {
	if a == nil {
		return "<nil>"
	}
	return a.String()
}

// checkName applies the catalog's rule for extension names.
func checkName(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("name %q: want 1-64 characters", name)
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '.' || c == '-' || c == '_')
		if !ok {
			return fmt.Errorf("name %q: want lowercase letters and digits, then '.', '-', '_'", name)
		}
	}
	return nil
}

// wait fails t unless ch closes within TransportWait.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(TransportWait):
		t.Fatalf("%s: not within %v", what, TransportWait)
	}
}

// alive fails t if ch is already closed.
func alive(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: closed, want open", what)
	default:
	}
}

// result runs f in a goroutine and returns a channel receiving its error;
// a panic of f is received as an *extPanic, which errWithin fails on.
func result(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- &extPanic{what: "transport", v: r, stack: debug.Stack()}
			}
		}()
		ch <- f()
	}()
	return ch
}

// errWithin fails t unless ch yields within TransportWait; it returns the
// error received.
func errWithin(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		if isPanic(err) {
			t.Fatalf("%s: %v", what, err)
		}
		return err
	case <-time.After(TransportWait):
		t.Fatalf("%s: no return within %v", what, TransportWait)
		return nil
	}
}

// listen binds 127.0.0.1:0 and closes the listener at the end of the test.
func listen(t *testing.T, tr spi.Transport) spi.Listener {
	t.Helper()
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen(127.0.0.1:0): %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// dial dials addr with a TransportWait deadline.
func dial(tr spi.Transport, addr string) (spi.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), TransportWait)
	defer cancel()
	return tr.Dial(ctx, addr)
}

// Pair returns a consumer session of tr dialed to a fresh listener on
// 127.0.0.1 and the provider session accepted for it (accepted while the
// dial runs, so that a TLS handshake, which the provider's side makes once
// accepted, completes); both are closed at the end of the test. For a
// transport's own tests beside TestTransport.
func Pair(t *testing.T, tr spi.Transport) (consumer, provider spi.Session) {
	t.Helper()
	return pair(t, tr)
}

// StreamPair opens a stream on the consumer session c and accepts it on
// the provider session p.
func StreamPair(t *testing.T, c, p spi.Session) (cs, ps io.ReadWriteCloser) {
	t.Helper()
	return streamPair(t, c, p)
}

// pair returns a consumer session dialed to a fresh listener and the
// provider session accepted for it; both are closed at the end of the test.
func pair(t *testing.T, tr spi.Transport) (consumer, provider spi.Session) {
	t.Helper()
	l := listen(t, tr)
	type accepted struct {
		s   spi.Session
		err error
	}
	ach := make(chan accepted, 1)
	guarded(t, "listener Accept", func() {
		s, err := l.Accept()
		ach <- accepted{s, err}
	})
	c, err := dial(tr, l.Addr().String())
	if err != nil {
		t.Fatalf("Dial(%s): %v", l.Addr(), err)
	}
	t.Cleanup(func() { c.Close() })
	var a accepted
	select {
	case a = <-ach:
	case <-time.After(TransportWait):
		t.Fatalf("listener Accept: no session within %v of a dial", TransportWait)
	}
	if a.err != nil {
		t.Fatalf("listener Accept: %v", a.err)
	}
	t.Cleanup(func() { a.s.Close() })
	l.Close()
	return c, a.s
}

// streamPair opens a stream on the consumer and accepts it on the provider.
func streamPair(t *testing.T, c, p spi.Session) (cs, ps io.ReadWriteCloser) {
	t.Helper()
	cs, err := c.Open()
	if err != nil {
		t.Fatalf("consumer Open: %v", err)
	}
	type accepted struct {
		st  io.ReadWriteCloser
		err error
	}
	ach := make(chan accepted, 1)
	guarded(t, "session Accept", func() {
		st, err := p.Accept()
		ach <- accepted{st, err}
	})
	select {
	case a := <-ach:
		if a.err != nil {
			t.Fatalf("provider Accept: %v", a.err)
		}
		return cs, a.st
	case <-time.After(TransportWait):
		t.Fatalf("provider Accept: no stream within %v of the consumer's Open", TransportWait)
		return nil, nil
	}
}

// drain reads st until it fails, as the exchange's read loop does; the test
// waits for it at cleanup.
func drain(t *testing.T, st io.Reader) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer catch(t, "stream Read")
		_, _ = io.Copy(io.Discard, st)
	}()
	t.Cleanup(wg.Wait)
}

// serve runs an Accept loop on s, echoing every accepted stream back, until
// s dies; the test waits for it at cleanup.
func serve(t *testing.T, s spi.Session) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer catch(t, "session Accept")
		for {
			st, err := s.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer catch(t, "stream")
				_, _ = io.Copy(st, st)
				st.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		s.Close()
		wg.Wait()
	})
}

func testListenAddr(t *testing.T, tr spi.Transport) {
	l := listen(t, tr)
	if err := checkListenAddr(l.Addr()); err != nil {
		t.Fatal(err)
	}
	if l2, err := tr.Listen(l.Addr().String()); err == nil {
		l2.Close()
		t.Fatalf("second Listen(%s) on a bound address: no error", l.Addr())
	}
	// Port 0 picks a free port each time, while the first listener is open.
	l2, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatalf("a second Listen(127.0.0.1:0) while %s is bound: %v; want another free port", l.Addr(), err)
	}
	defer l2.Close()
	if a, b := addrString(l.Addr()), addrString(l2.Addr()); a == b {
		t.Fatalf("two Listen(127.0.0.1:0) both report %s; want a different port each", a)
	}
}

// testEcho exchanges bytes both ways on one stream; over TCP it also checks
// that the session addresses are mirrored (a unix socket's dialing end has
// no name, so it cannot be).
func testEcho(t *testing.T, tr spi.Transport, tcp bool) {
	c, p := pair(t, tr)
	cl, cr, pl, pr := addrString(c.LocalAddr()), addrString(c.RemoteAddr()), addrString(p.LocalAddr()), addrString(p.RemoteAddr())
	if tcp && (cl != pr || cr != pl) {
		t.Errorf("addresses: consumer %s->%s, provider %s->%s; want mirrored", cl, cr, pl, pr)
	}
	if c.Multiplexed() != p.Multiplexed() {
		t.Errorf("Multiplexed: consumer %v, provider %v", c.Multiplexed(), p.Multiplexed())
	}
	cs, ps := streamPair(t, c, p)
	roundTrip(t, cs, ps, []byte("ping from the consumer"))
	roundTrip(t, ps, cs, []byte("pong from the provider"))
	alive(t, c.Done(), "consumer Done after an exchange")
	alive(t, p.Done(), "provider Done after an exchange")
}

// roundTrip writes msg on w and reads it back from r.
func roundTrip(t *testing.T, w io.Writer, r io.Reader, msg []byte) {
	t.Helper()
	werr := result(func() error { _, err := w.Write(msg); return err })
	got := make([]byte, len(msg))
	rerr := result(func() error { _, err := io.ReadFull(r, got); return err })
	if err := errWithin(t, werr, "Write"); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := errWithin(t, rerr, "Read"); err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("read %q, want %q", got, msg)
	}
}

func testStreams(t *testing.T, tr spi.Transport) {
	c, p := pair(t, tr)
	if !c.Multiplexed() {
		testSingleStream(t, c, p)
		return
	}
	serve(t, p)
	// Several streams opened concurrently, each echoed on its own.
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer catch(t, "stream")
			st, err := c.Open()
			if err != nil {
				errs <- fmt.Errorf("Open #%d: %w", i, err)
				return
			}
			defer st.Close()
			msg := bytes.Repeat([]byte{byte('a' + i)}, 1000+i)
			for range 3 {
				if _, err := st.Write(msg); err != nil {
					errs <- fmt.Errorf("stream %d: Write: %w", i, err)
					return
				}
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(st, got); err != nil {
					errs <- fmt.Errorf("stream %d: Read: %w", i, err)
					return
				}
				if !bytes.Equal(got, msg) {
					errs <- fmt.Errorf("stream %d: echoed bytes differ (streams mixed up?)", i)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	wait(t, done, "8 concurrent echo streams")
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Closing one stream leaves the session up.
	cs, err := c.Open()
	if err != nil {
		t.Fatalf("Open after streams closed: %v", err)
	}
	roundTrip(t, cs, cs, []byte("echo"))
	if err := cs.Close(); err != nil {
		t.Fatalf("stream Close: %v", err)
	}
	alive(t, c.Done(), "consumer Done after closing a stream")
	alive(t, p.Done(), "provider Done after closing a stream")

	// The provider opens a stream too; the consumer accepts it.
	ach := make(chan io.ReadWriteCloser, 1)
	go func() {
		defer close(ach)
		defer catch(t, "session Accept")
		st, err := c.Accept()
		if err == nil {
			ach <- st
		}
	}()
	ps, err := p.Open()
	if err != nil {
		t.Fatalf("provider Open on a multiplexed session: %v", err)
	}
	var cst io.ReadWriteCloser
	select {
	case cst = <-ach:
	case <-time.After(TransportWait):
		t.Fatal("consumer Accept: no provider-opened stream")
	}
	if cst == nil {
		t.Fatal("consumer Accept failed")
	}
	roundTrip(t, ps, cst, []byte("provider-opened"))
	ps.Close()
	if n, err := io.ReadFull(cst, make([]byte, 1)); err == nil {
		t.Fatalf("read %d bytes after the peer closed the stream, want EOF", n)
	}
	cst.Close()
}

// testSingleStream checks a session that is not multiplexed.
func testSingleStream(t *testing.T, c, p spi.Session) {
	if p.Multiplexed() {
		t.Fatal("consumer not multiplexed, provider is")
	}
	cs, ps := streamPair(t, c, p)
	roundTrip(t, cs, ps, []byte("one stream"))
	if _, err := c.Open(); !errors.Is(err, spi.ErrNotMultiplexed) {
		t.Errorf("second consumer Open: %v, want spi.ErrNotMultiplexed", err)
	}
	if _, err := p.Open(); !errors.Is(err, spi.ErrNotMultiplexed) {
		t.Errorf("provider Open after Accept: %v, want spi.ErrNotMultiplexed", err)
	}
	accept := result(func() error { _, err := c.Accept(); return err })
	select {
	case err := <-accept:
		t.Fatalf("consumer Accept on a session that is not multiplexed returned (%v), want it to block until Close", err)
	case <-time.After(50 * time.Millisecond):
	}
	drain(t, ps)
	c.Close()
	if err := errWithin(t, accept, "consumer Accept after Close"); err == nil {
		t.Fatal("consumer Accept after Close: nil error")
	}
	wait(t, p.Done(), "provider Done after the consumer closed")
}

func testLargeTransfer(t *testing.T, tr spi.Transport) {
	c, p := pair(t, tr)
	cs, ps := streamPair(t, c, p)
	msg := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range msg {
		msg[i] = byte(rng.Uint32())
	}
	echo := result(func() error {
		_, err := io.CopyN(ps, ps, int64(len(msg)))
		return err
	})
	write := result(func() error {
		// Uneven writes, as a frame writer makes them.
		for off := 0; off < len(msg); {
			n := min(len(msg)-off, 1+rng.IntN(300<<10))
			if _, err := cs.Write(msg[off : off+n]); err != nil {
				return err
			}
			off += n
		}
		return nil
	})
	got := make([]byte, len(msg))
	read := result(func() error { _, err := io.ReadFull(cs, got); return err })
	for name, ch := range map[string]<-chan error{"write": write, "echo": echo, "read back": read} {
		if err := errWithin(t, ch, "4 MiB "+name); err != nil {
			t.Fatalf("4 MiB %s: %v", name, err)
		}
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("4 MiB echoed back differs from what was written")
	}
}

// testClose closes one side and expects both Dones to close.
func testClose(t *testing.T, tr spi.Transport, consumerCloses bool) {
	c, p := pair(t, tr)
	cs, ps := streamPair(t, c, p)
	roundTrip(t, cs, ps, []byte("x"))
	drain(t, cs)
	drain(t, ps)
	closer, other, names := c, p, [2]string{"consumer", "provider"}
	if !consumerCloses {
		closer, other, names = p, c, [2]string{"provider", "consumer"}
	}
	if err := closer.Close(); err != nil {
		t.Fatalf("%s Close: %v", names[0], err)
	}
	wait(t, closer.Done(), names[0]+" Done after its Close")
	wait(t, other.Done(), names[1]+" Done after the "+names[0]+" closed")
}

// rawListener accepts one raw TCP connection.
func rawListener(t *testing.T) (net.Listener, <-chan net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			ch <- c
		}
		close(ch)
	}()
	return l, ch
}

// kill ends a raw connection: with a reset (linger 0) or a plain close.
func kill(c net.Conn, reset bool) {
	if tc, ok := c.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// testPeerDeathConsumer dials a raw TCP server that then dies.
func testPeerDeathConsumer(t *testing.T, tr spi.Transport, reset bool) {
	l, conns := rawListener(t)
	c, err := dial(tr, l.Addr().String())
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	st, err := c.Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	drain(t, st)
	var raw net.Conn
	select {
	case raw = <-conns:
	case <-time.After(TransportWait):
		t.Fatal("raw server: no connection")
	}
	if raw == nil {
		t.Fatal("raw server: accept failed")
	}
	kill(raw, reset)
	wait(t, c.Done(), "consumer Done after the provider's connection died")
	if _, err := c.Open(); err == nil {
		t.Error("Open on a dead session: nil error")
	}
}

// testPeerDeathProvider accepts a raw TCP client that then dies.
func testPeerDeathProvider(t *testing.T, tr spi.Transport, reset bool) {
	l := listen(t, tr)
	ach := make(chan spi.Session, 1)
	go func() {
		defer close(ach)
		defer catch(t, "listener Accept")
		s, err := l.Accept()
		if err == nil {
			ach <- s
		}
	}()
	raw, err := net.DialTimeout("tcp", l.Addr().String(), TransportWait)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var p spi.Session
	select {
	case p = <-ach:
	case <-time.After(TransportWait):
		t.Fatal("listener Accept: no session for a raw TCP client")
	}
	if p == nil {
		t.Fatal("listener Accept failed")
	}
	serve(t, p)
	kill(raw, reset)
	wait(t, p.Done(), "provider Done after the consumer's connection died")
}

func testAcceptUnblocks(t *testing.T, tr spi.Transport) {
	c, p := pair(t, tr)
	cs, ps := streamPair(t, c, p)
	drain(t, cs)
	drain(t, ps)
	// Both sides block in Accept now: nobody opens another stream.
	cacc := result(func() error { _, err := c.Accept(); return err })
	pacc := result(func() error { _, err := p.Accept(); return err })
	time.Sleep(20 * time.Millisecond)
	c.Close()
	if err := errWithin(t, cacc, "consumer Accept after its Close"); err == nil {
		t.Error("consumer Accept after Close: nil error")
	}
	if err := errWithin(t, pacc, "provider Accept after the consumer's Close"); err == nil {
		t.Error("provider Accept after the peer's Close: nil error")
	}
	if _, err := p.Accept(); err == nil {
		t.Error("Accept on a dead session: nil error")
	}
}

func testListenerAcceptUnblocks(t *testing.T, tr spi.Transport) {
	l := listen(t, tr)
	acc := result(func() error {
		s, err := l.Accept()
		if err == nil {
			s.Close()
			return errors.New("accepted a session nobody dialed")
		}
		return err
	})
	time.Sleep(20 * time.Millisecond)
	if err := l.Close(); err != nil {
		t.Fatalf("listener Close: %v", err)
	}
	err := errWithin(t, acc, "listener Accept after Close")
	if !errors.Is(err, net.ErrClosed) {
		t.Fatalf("listener Accept after Close: %v, want net.ErrClosed", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("listener Accept on a closed listener: %v, want net.ErrClosed", err)
	}
	if _, err := dial(tr, l.Addr().String()); err == nil {
		t.Fatal("Dial to a closed listener: nil error")
	}
}

func testDoubleClose(t *testing.T, tr spi.Transport) {
	c, p := pair(t, tr)
	cs, ps := streamPair(t, c, p)
	drain(t, ps)
	if err := cs.Close(); err != nil {
		t.Errorf("stream Close: %v", err)
	}
	cs.Close() // a second stream Close may report an error; it must not panic
	for _, s := range []struct {
		name string
		s    spi.Session
	}{{"consumer", c}, {"provider", p}} {
		// Close concurrently with itself, then again.
		e1 := result(s.s.Close)
		e2 := result(s.s.Close)
		errWithin(t, e1, s.name+" Close")
		errWithin(t, e2, s.name+" Close")
		if err := s.s.Close(); err != nil {
			t.Errorf("%s: Close of a closed session: %v, want nil", s.name, err)
		}
		wait(t, s.s.Done(), s.name+" Done after Close")
	}
	l := listen(t, tr)
	if err := l.Close(); err != nil {
		t.Errorf("listener Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("listener Close of a closed listener: %v, want nil", err)
	}
}

func testUseAfterClose(t *testing.T, tr spi.Transport) {
	c, p := pair(t, tr)
	cs, ps := streamPair(t, c, p)
	drain(t, ps)
	c.Close()
	if _, err := c.Open(); err == nil {
		t.Error("Open after Close: nil error")
	}
	if _, err := cs.Write([]byte("after close")); err == nil {
		t.Error("stream Write after session Close: nil error")
	}
	if _, err := cs.Read(make([]byte, 8)); err == nil {
		t.Error("stream Read after session Close: nil error")
	}
	wait(t, p.Done(), "provider Done after the consumer closed")
	// Writes on the provider's stream eventually fail too.
	werr := result(func() error {
		for {
			if _, err := ps.Write(make([]byte, 1024)); err != nil {
				return err
			}
		}
	})
	errWithin(t, werr, "provider Write after the session died")
}

// testDialRefused dials the address of a listener of the transport that
// has been closed.
func testDialRefused(t *testing.T, tr spi.Transport) {
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen(127.0.0.1:0): %v", err)
	}
	addr := addrString(l.Addr())
	if err := l.Close(); err != nil {
		t.Fatalf("listener Close: %v", err)
	}
	derr := result(func() error {
		s, err := dial(tr, addr)
		if err == nil {
			s.Close()
			return errors.New("connected to a closed listener's address")
		}
		return err
	})
	start := time.Now()
	err = errWithin(t, derr, "Dial to a closed listener's address")
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("Dial(%s) to a closed listener's address: %v after %v, want a prompt refusal", addr, err, time.Since(start))
	}
}

func testDialDeadline(t *testing.T, tr spi.Transport) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !shrinkBacklog(l) {
		t.Skip("cannot shrink a listen backlog on this platform")
	}
	// Fill the backlog until a connection hangs in its handshake.
	hanging := false
	for range 8 {
		c, err := net.DialTimeout("tcp", l.Addr().String(), 500*time.Millisecond)
		if err != nil {
			hanging = true
			break
		}
		defer c.Close()
	}
	if !hanging {
		t.Skip("the kernel completed every handshake; no way to make a dial hang")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	derr := result(func() error {
		s, err := tr.Dial(ctx, l.Addr().String())
		if err == nil {
			s.Close()
			return errors.New("connected through a full backlog")
		}
		return err
	})
	err = errWithin(t, derr, "Dial with a 300ms context to a hanging address")
	if err == nil {
		t.Fatal("Dial to a hanging address: nil error")
	}
	// The dialer's socket deadline, taken from ctx, may fire a moment before
	// ctx's own timer: a timeout error is as good as an ended context.
	var ne net.Error
	if ctx.Err() == nil && !(errors.As(err, &ne) && ne.Timeout()) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial returned %v before its context ended, yet the address hangs", err)
	}
}

func testDialCancelled(t *testing.T, tr spi.Transport) {
	l := listen(t, tr)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := tr.Dial(ctx, l.Addr().String())
	if err == nil {
		s.Close()
		t.Fatal("Dial with a cancelled context: nil error")
	}
}

// BenchmarkTransport measures the raw throughput of one stream of the
// transport tb builds: the consumer writes 100-byte frames, pipelined, the
// provider echoes every byte, the consumer reads them all back. One op is
// one frame (100 bytes each way). "write=1" makes one Write per frame;
// "write=64" one Write per 64 frames, as a coalescing frame writer does;
// "pingpong" waits for each frame's echo before writing the next (the
// latency of one call at concurrency 1, without the exchange).
func BenchmarkTransport(b *testing.B, tb spi.TransportBuilder) {
	for _, batch := range []int{1, 64} {
		b.Run(fmt.Sprintf("write=%d", batch), func(b *testing.B) { benchmarkStream(b, tb, batch) })
	}
	b.Run("pingpong", func(b *testing.B) { benchmarkStream(b, tb, 0) })
}

// benchmarkStream pipelines frames batch at a time, or ping-pongs them one
// by one when batch is 0.
func benchmarkStream(b *testing.B, tb spi.TransportBuilder, batch int) {
	tr, err := tb.Build(spi.MustParse("airnode://127.0.0.1:0/spitest.Transport"))
	if err != nil {
		b.Fatal(err)
	}
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan spi.Session, 1)
	go func() {
		s, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- s
	}()
	c, err := dial(tr, l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	p := <-accepted
	if p == nil {
		b.Fatal("listener Accept failed")
	}
	defer p.Close()
	cs, err := c.Open()
	if err != nil {
		b.Fatal(err)
	}
	ps, err := p.Accept()
	if err != nil {
		b.Fatal(err)
	}
	echoed := make(chan struct{})
	go func() {
		defer close(echoed)
		_, _ = io.Copy(ps, ps)
	}()
	const frame = 100
	buf := bytes.Repeat([]byte{'f'}, frame*max(batch, 1))
	b.SetBytes(frame)
	b.ReportAllocs()
	b.ResetTimer()
	if batch == 0 {
		for range b.N {
			if _, err := cs.Write(buf); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(cs, buf); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		c.Close()
		p.Close()
		<-echoed
		return
	}
	werr := result(func() error {
		for left := b.N; left > 0; left -= batch {
			if _, err := cs.Write(buf[:frame*min(batch, left)]); err != nil {
				return err
			}
		}
		return nil
	})
	if _, err := io.CopyN(io.Discard, cs, int64(b.N*frame)); err != nil {
		b.Fatal(err)
	}
	if err := <-werr; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	c.Close()
	p.Close()
	<-echoed
}
