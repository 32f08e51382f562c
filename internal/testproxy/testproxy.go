// Package testproxy is a loopback TCP proxy for tests that need a network
// fault between two real endpoints (a consumer and a provider, a client and
// ZooKeeper): a cut connection, a peer that hangs with its connection up, a
// path that black-holes everything, a host that vanishes and comes back, an
// unreachable server, a path that goes dark and heals (Unreachable), a
// slow connect.
package testproxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards every connection accepted on its loopback address to its
// target, one outgoing connection per incoming one, until told otherwise.
// Its methods are safe for concurrent use. New registers Close with the
// test's cleanup.
type Proxy struct {
	t      testing.TB
	target atomic.Pointer[string]
	delay  atomic.Int64 // ns each new connection waits before its dial (SetConnectDelay)
	paused atomic.Bool
	hole   atomic.Bool
	rate   [2]atomic.Int64 // bytes per second toward the target [up] and back [down]; 0 unlimited (SetRate)
	quit   chan struct{}   // closed by Close: ends paused pipes and delayed dials

	mu      sync.Mutex
	addr    string
	l       net.Listener // nil while Down
	conns   []net.Conn
	refuse  bool
	unreach io.Closer // while Unreachable: the listener that takes no connection, and its filler
	accepts []time.Time
	closed  bool

	wg sync.WaitGroup
}

// New listens on 127.0.0.1 (a free port) and forwards to target, a
// host:port; an empty target closes connections at once until SetTarget.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{t: t, quit: make(chan struct{})}
	if target != "" {
		p.target.Store(&target)
	}
	p.listen("127.0.0.1:0")
	t.Cleanup(p.Close)
	return p
}

// Addr returns the host:port the proxy listens on; it stays the same
// across Down and Up.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// SetTarget forwards connections accepted from now on to addr.
func (p *Proxy) SetTarget(addr string) { p.target.Store(&addr) }

// SetConnectDelay makes each connection accepted from now on wait d
// before the proxy dials the target: a connection that takes d to set up.
func (p *Proxy) SetConnectDelay(d time.Duration) { p.delay.Store(int64(d)) }

// Cut closes every forwarded connection, both sides (the peers read EOF);
// new connections are forwarded as before.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLocked()
}

func (p *Proxy) cutLocked() {
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Refuse, while on, closes every new connection at once; with Cut, the
// server behind is unreachable although its host answers.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	p.refuse = on
	p.mu.Unlock()
}

// Pause, while on, forwards nothing and keeps every connection open: the
// peer behind looks hung (kill -STOP). What was read meanwhile is
// forwarded once Pause(false).
func (p *Proxy) Pause(on bool) { p.paused.Store(on) }

// BlackHole forwards nothing more, from now on and for good, in either
// direction, and closes nothing, not even when a side closes (no FIN, no
// RST): a dead network path. The proxy stops reading, so, as on a real
// dead path where nothing is acknowledged, a sender's writes stop once
// the socket buffers between it and the proxy are full (a few MiB on
// loopback); what was read already is dropped.
func (p *Proxy) BlackHole() { p.hole.Store(true) }

// Directions for SetRate.
const (
	up   = 0 // toward the target
	down = 1 // back from the target
)

// SetRate limits every forwarded connection, open or new, to up bytes per
// second toward the target and down bytes per second back (0: no limit),
// like a link of that bandwidth: a token bucket per direction and
// connection, with no credit saved while idle, forwarding at most a
// fiftieth of a second's worth per read. What the proxy has not forwarded
// yet waits in the sockets' buffers, and a sender's writes stall once
// they are full, as on a slow link with a deep queue.
func (p *Proxy) SetRate(up, down int) {
	p.rate[0].Store(int64(max(up, 0)))
	p.rate[1].Store(int64(max(down, 0)))
}

// Down closes the listener and every connection: the host vanished (the
// peers read EOF, new dials are refused). Up listens again.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	if p.unreach != nil {
		p.unreach.Close()
		p.unreach = nil
	}
	p.cutLocked()
}

// Up listens again on the address Down gave up.
func (p *Proxy) Up() { p.listen(p.Addr()) }

// Accepts returns when each forwarded connection was accepted, oldest
// first.
func (p *Proxy) Accepts() []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Time(nil), p.accepts...)
}

// Close is Down for good, and waits for every goroutine of the proxy.
// Idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.quit)
	p.mu.Unlock()
	p.Down()
	p.wg.Wait()
}

func (p *Proxy) listen(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatalf("testproxy: listen %s: %v", addr, err)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return
	}
	p.l, p.addr = l, l.Addr().String()
	p.mu.Unlock()
	p.wg.Go(func() { p.accept(l) })
}

func (p *Proxy) accept(l net.Listener) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		target := p.target.Load()
		if refuse || target == nil {
			in.Close()
			continue
		}
		p.wg.Go(func() { p.forward(in, *target, time.Duration(p.delay.Load())) })
	}
}

// forward dials target for in, after delay, and pipes both ways.
func (p *Proxy) forward(in net.Conn, target string, delay time.Duration) {
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-p.quit:
			in.Close()
			return
		}
	}
	out, err := net.Dial("tcp", target)
	if err != nil {
		in.Close()
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		in.Close()
		out.Close()
		return
	}
	p.conns = append(p.conns, in, out)
	p.accepts = append(p.accepts, time.Now())
	p.mu.Unlock()
	p.wg.Go(func() { p.pipe(out, in, up) })
	p.pipe(in, out, down)
}

// pipe copies src to dst in direction dir, holding what it read while
// paused, pacing it to SetRate's limit, and dropping it, then reading no
// more, in a black hole. A read error closes dst, except in a black hole.
func (p *Proxy) pipe(dst, src net.Conn, dir int) {
	buf := make([]byte, 32<<10)
	var pace pacer
	for {
		if p.hole.Load() {
			<-p.quit // read nothing more: the sender's buffers fill
			return
		}
		rate := p.rate[dir].Load()
		size := len(buf)
		if rate > 0 {
			size = int(min(int64(size), max(1, rate/50)))
		}
		n, err := src.Read(buf[:size])
		for p.paused.Load() {
			select {
			case <-p.quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		if n > 0 && !p.hole.Load() {
			if !p.sleep(pace.wait(rate, n)) {
				return
			}
			if p.hole.Load() { // black-holed while pacing: drop it
				continue
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if !p.hole.Load() {
				dst.Close()
			}
			return
		}
	}
}

// sleep waits d, or until Close (false).
func (p *Proxy) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.quit:
		return false
	}
}

// pacer is one direction's token bucket: the bytes let through since
// since, at the rate in force.
type pacer struct {
	rate  int64
	since time.Time
	sent  int64
}

// wait returns how long n more bytes must wait at rate bytes per second
// (0: unlimited). A pipe that fell idle saves no credit: its count starts
// again.
func (pc *pacer) wait(rate int64, n int) time.Duration {
	if rate <= 0 {
		pc.rate = 0
		return 0
	}
	if pc.rate == 0 {
		pc.rate, pc.since = rate, time.Now()
	}
	now := time.Now()
	if rate != pc.rate || now.Sub(pc.due()) > 20*time.Millisecond {
		pc.rate, pc.since, pc.sent = rate, now, 0
	}
	pc.sent += int64(n)
	return time.Until(pc.due())
}

// due is when the bytes counted so far have gone through; pc.rate > 0.
func (pc *pacer) due() time.Time {
	return pc.since.Add(time.Duration(float64(pc.sent) / float64(pc.rate) * float64(time.Second)))
}

// Hung listens on 127.0.0.1 (a free port) and accepts connections but
// never reads or answers them, like a process stopped with kill -STOP
// whose kernel still completes TCP handshakes, or a wedged accept loop.
// It returns the address; the test's cleanup closes the listener and
// every accepted connection and waits for the accept loop.
func Hung(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}
