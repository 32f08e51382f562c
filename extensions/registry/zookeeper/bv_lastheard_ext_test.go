package zookeeper_test

import (
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// pingDropper is a loopback proxy to a ZooKeeper server that forwards
// everything but the server's answers to pings: after a connection's
// first frame (the session handshake's answer), each frame from the
// server ([int32 length][body]) whose reply header's xid is -2 (a ping's
// answer) is dropped and counted. So a client behind it hears every
// response and watch event, and no ping answer.
type pingDropper struct {
	l       net.Listener
	target  string
	dropped atomic.Int64 // ping answers dropped
	mu      sync.Mutex
	conns   []net.Conn
	wg      sync.WaitGroup
}

func newPingDropper(t *testing.T, target string) *pingDropper {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pingDropper{l: l, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.cut)
	return p
}

func (p *pingDropper) addr() string { return p.l.Addr().String() }

func (p *pingDropper) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(s, c); s.Close() }()
		go func() { defer p.wg.Done(); p.down(c, s); c.Close() }()
	}
}

// down forwards the server's frames to the client, dropping ping answers.
func (p *pingDropper) down(c, s net.Conn) {
	var head [4]byte
	for first := true; ; first = false {
		if _, err := io.ReadFull(s, head[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[:]))
		if _, err := io.ReadFull(s, body); err != nil {
			return
		}
		if !first && len(body) >= 4 && int32(binary.BigEndian.Uint32(body)) == -2 {
			p.dropped.Add(1)
			continue
		}
		if _, err := c.Write(append(head[:], body...)); err != nil {
			return
		}
	}
}

// cut closes the listener and every connection (the client reads EOF,
// later dials are refused) and waits for the forwarding goroutines.
func (p *pingDropper) cut() {
	p.l.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// fix-bv #2 (a tester: "last_heard_ago counts from the last ping"): the
// "connection lost" line's last_heard_ago counts from the last bytes
// heard from ZooKeeper, any response or watch event, not from the last
// ping answer. Behind a proxy that drops every ping answer, a consumer's
// registry (6 s session: pings every 2 s, a connection silent for 4 s is
// dropped) hears only watch events and the re-lists they cause, every
// 300 ms for 5 s; then nothing for 1.5 s, and the proxy cuts the
// connection. last_heard_ago is about 1.5 s: the last watch event's
// age. Counting ping answers only, there would be none (and the session
// would have been lost at 4 s); counting from the handshake, over 6 s.
func TestBv_LastHeardCountsResponsesAndEventsNotOnlyPings(t *testing.T) {
	px := newPingDropper(t, server.Addr())
	var clog lineLog
	u := spi.MustParse("zookeeper://" + px.addr() + "?root=bvheard&session.timeout=6s")
	c, err := zookeeper.Builder{Logger: slog.New(&clog)}.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	p, err := zookeeper.Builder{}.Build(spi.MustParse(server.URL("root=bvheard&session.timeout=6s")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second)

	// a watch event (and its re-list) every 300 ms for 5 s, longer than
	// the 4 s a connection may stay silent
	start := time.Now()
	var ports []int
	var lastEvent time.Time                                      // when the last push came (its re-list read just before)
	for port := 101; time.Since(start) < 5*time.Second; port++ { // three digits: the list is sorted as text
		if err := p.Register(ctx(t), provider(port, "")); err != nil {
			t.Fatal(err)
		}
		ports = append(ports, port)
		rec.wait(t, 5*time.Second, ports...)
		lastEvent = time.Now()
		time.Sleep(300 * time.Millisecond)
	}
	if n := len(clog.find(msgLost)); n != 0 {
		t.Fatalf("the connection was lost %d times while only events and responses came; want none", n)
	}
	if px.dropped.Load() == 0 {
		t.Fatal("the proxy dropped no ping answer: the client sent no ping in 5 s of a 6 s session")
	}
	time.Sleep(time.Until(lastEvent.Add(1500 * time.Millisecond)))
	px.cut()
	cutAt := time.Now()
	line := clog.waitFor(t, 10*time.Second, msgLost)
	t.Logf("%d ping answers dropped; %s last_heard_ago=%s (the last event %v before the cut, the handshake %v before)",
		px.dropped.Load(), line.msg, line.attrs["last_heard_ago"], cutAt.Sub(lastEvent).Round(time.Millisecond), cutAt.Sub(start).Round(time.Millisecond))
	ago, err := time.ParseDuration(line.attrs["last_heard_ago"])
	if err != nil {
		t.Fatalf("last_heard_ago %q: %v", line.attrs["last_heard_ago"], err)
	}
	if since := line.at.Sub(lastEvent); ago < 1200*time.Millisecond || ago < since-300*time.Millisecond || ago > since+300*time.Millisecond {
		t.Errorf("last_heard_ago=%v; want the time since the last watch event and its re-list (%v at the line, at least 1.2s)", ago, since.Round(time.Millisecond))
	}
}
