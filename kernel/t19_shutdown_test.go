package kernel

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// tester19 findings 2, 3 (heartbeat Watch) and 5: extensions that block
// or panic where the kernel waits on them, and a listener whose Addr is
// not a *net.TCPAddr. The blocking fakes wait on a gate the test opens
// in t.Cleanup, so that the goroutines Shutdown and Export leave behind
// end before goleak looks (TestMain).

const t19Origin = extension.Origin("t19 test")

// t19Gate returns a channel closed when the test ends.
func t19Gate(t *testing.T) chan struct{} {
	g := make(chan struct{})
	t.Cleanup(func() { close(g) })
	return g
}

// t19Transport is the bundled tcp transport, named name, with optional
// misbehaviour: a listener Close, a Listen or a Dial that blocks until
// gate closes (the Dial ignoring its ctx), or a listener Addr replaced by
// addr.
type t19Transport struct {
	name                                string
	gate                                chan struct{}
	blockListen, blockLClose, blockDial bool
	blockSClose                         bool // the provider's sessions' Close
	addr                                func(net.Addr) net.Addr
}

func (b *t19Transport) Name() string { return b.name }
func (b *t19Transport) Build(u spi.URL) (spi.Transport, error) {
	in, err := tcp.Builder{}.Build(u)
	return &t19Tr{b: b, in: in}, err
}

type t19Tr struct {
	b  *t19Transport
	in spi.Transport
}

func (t *t19Tr) Listen(a string) (spi.Listener, error) {
	if t.b.blockListen {
		<-t.b.gate
	}
	l, err := t.in.Listen(a)
	if err != nil {
		return nil, err
	}
	return &t19Listener{Listener: l, b: t.b}, nil
}

func (t *t19Tr) Dial(ctx context.Context, a string) (spi.Session, error) {
	if t.b.blockDial {
		<-t.b.gate // ignores ctx
		return nil, errors.New("t19: dial released")
	}
	return t.in.Dial(ctx, a)
}

type t19Listener struct {
	spi.Listener
	b *t19Transport
}

func (l *t19Listener) Close() error {
	if l.b.blockLClose {
		<-l.b.gate
	}
	return l.Listener.Close()
}

func (l *t19Listener) Accept() (spi.Session, error) {
	sess, err := l.Listener.Accept()
	if err != nil || !l.b.blockSClose {
		return sess, err
	}
	return &t19Session{Session: sess, gate: l.b.gate}, nil
}

// t19Session is a session whose Close blocks until gate closes.
type t19Session struct {
	spi.Session
	gate chan struct{}
}

func (s *t19Session) Close() error {
	<-s.gate
	return s.Session.Close()
}

func (l *t19Listener) Addr() net.Addr {
	if l.b.addr != nil {
		return l.b.addr(l.Listener.Addr())
	}
	return l.Listener.Addr()
}

// t19Registry is the memory registry, named "t19reg", whose Unregister
// or Close blocks until gate closes, ignoring ctx.
type t19Registry struct {
	in                     *memory.Builder
	gate                   chan struct{}
	blockUnreg, blockClose bool
	blockReg, blockSub     bool
}

func (b *t19Registry) Name() string { return "t19reg" }
func (b *t19Registry) Build(u spi.URL) (spi.Registry, error) {
	r, err := b.in.Build(u.WithScheme("memory"))
	return &t19Reg{Registry: r, b: b}, err
}

type t19Reg struct {
	spi.Registry
	b *t19Registry
}

func (r *t19Reg) Unregister(ctx context.Context, u spi.URL) error {
	if r.b.blockUnreg {
		<-r.b.gate
	}
	return r.Registry.Unregister(ctx, u)
}

func (r *t19Reg) Register(ctx context.Context, u spi.URL) error {
	if r.b.blockReg {
		<-r.b.gate
	}
	return r.Registry.Register(ctx, u)
}

func (r *t19Reg) Subscribe(ctx context.Context, u spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	if r.b.blockSub {
		<-r.b.gate
	}
	return r.Registry.Subscribe(ctx, u, notify)
}

func (r *t19Reg) Close() error {
	if r.b.blockClose {
		<-r.b.gate
	}
	return r.Registry.Close()
}

// t19Heartbeat is a heartbeat strategy named name whose Watch panics, or
// whose stop panics or blocks until gate closes; watches counts Watch
// calls. side, when set, limits the misbehaviour to that side.
type t19Heartbeat struct {
	name                             string
	gate                             chan struct{}
	side                             spi.Side
	panicWatch, panicStop, blockStop bool
	watches                          atomic.Int64
}

func (h *t19Heartbeat) Name() string                           { return h.name }
func (h *t19Heartbeat) Build(u spi.URL) (spi.Heartbeat, error) { return h, nil }
func (h *t19Heartbeat) Watch(ch spi.Channel) func() {
	h.watches.Add(1)
	if h.side != "" && ch.Side() != h.side {
		return func() {}
	}
	if h.panicWatch {
		panic("t19 Watch exploded")
	}
	return func() {
		if h.panicStop {
			panic("t19 stop exploded")
		}
		if h.blockStop {
			<-h.gate
		}
	}
}

// t19Node returns a node on cat logging to a recordLog, closed at the
// end of the test.
func t19Node(t *testing.T, cat *extension.Catalogs, opts ...Option) (*Node, recordLog) {
	t.Helper()
	logs := newRecordLog()
	opts = append([]Option{WithLogger(slog.New(logs)), WithShutdownWait(0)}, opts...)
	n := NewNode(cat, opts...)
	t.Cleanup(func() { _ = n.Close() })
	return n, logs
}

// shutdownWithin runs n.Shutdown with a ctx of 1 s and fails the test
// unless it returns within 4 s (ctx's end, plus serverGrace at most, plus
// slack); it returns Shutdown's error.
func shutdownWithin(t *testing.T, n *Node) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- n.Shutdown(ctx) }()
	select {
	case err := <-done:
		t.Logf("Shutdown(1s ctx) returned after %v: %v", time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(4 * time.Second):
		t.Fatalf("Shutdown(1s ctx) still blocked after 4s")
		return nil
	}
}

// wantLeftRunning fails unless err is a *LeftRunningError whose text has
// every part of want, and logs has a Warn record of that text.
func wantLeftRunning(t *testing.T, err error, logs recordLog, want ...string) {
	t.Helper()
	var left *LeftRunningError
	if !errors.As(err, &left) {
		t.Fatalf("error %v: want a *LeftRunningError", err)
	}
	for _, w := range append(want, "did not return within ctx; left running") {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	for _, r := range logs.find("kernel: ") {
		if r.level == slog.LevelWarn && strings.Contains(r.msg, want[0]) && strings.Contains(r.msg, "left running") {
			return
		}
	}
	t.Errorf("no Warn record says %q ... left running", want[0])
}

func TestT19_2_ShutdownBoundedWhenListenerCloseBlocks(t *testing.T) {
	g := t19Gate(t)
	cat := testCatalogs(t)
	if err := cat.Transport.Register(&t19Transport{name: "t19lc", gate: g, blockLClose: true}, t19Origin); err != nil {
		t.Fatal(err)
	}
	p, logs := t19Node(t, cat)
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t19lc"))
	if err != nil {
		t.Fatal(err)
	}
	// A consumer connected: its connection still closes although the
	// listener's Close never returns.
	q, _ := t19Node(t, cat)
	r := refer(t, q, "airnode://"+e.URL().Address()+"/demo.Echo?transport=t19lc&timeout=2s")
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	conn := r.Providers()[0].(*remoteInvoker).conns[0]
	err = shutdownWithin(t, p)
	wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t19lc" listener Close on `+e.URL().Address())
	eventually(t, "the consumer's connection closed", func() bool { return !conn.ready() })
}

func TestT19_2_ShutdownBoundedWhenRegistryBlocks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		unreg      bool
		wantStep   string
		exportOnly bool
	}{
		{"Unregister", true, `kernel: shutdown: registry "t19reg" Unregister of demo.Echo`, false},
		{"Close", false, `kernel: shutdown: registry "t19reg" Close`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := t19Gate(t)
			cat := testCatalogs(t)
			rb := &t19Registry{in: memory.NewBuilder(), gate: g, blockUnreg: tc.unreg, blockClose: !tc.unreg}
			if err := cat.Registry.Register(rb, t19Origin); err != nil {
				t.Fatal(err)
			}
			p, logs := t19Node(t, cat, WithRegistry(spi.MustParse("t19reg://x")))
			if _, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
				t.Fatal(err)
			}
			err := shutdownWithin(t, p)
			wantLeftRunning(t, err, logs, tc.wantStep)
		})
	}
}

func TestT19_2_ShutdownBoundedWhenDialIgnoresCtx(t *testing.T) {
	g := t19Gate(t)
	cat := testCatalogs(t)
	if err := cat.Transport.Register(&t19Transport{name: "t19dial", gate: g, blockDial: true}, t19Origin); err != nil {
		t.Fatal(err)
	}
	_, e := provider(t)
	q, logs := t19Node(t, cat)
	r, err := q.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?transport=t19dial&timeout=300ms&connect.timeout=200ms"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	// The call is bounded by its timeout, the Dial not returning.
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); spi.StatusOf(err) != spi.StatusClientTimeout {
		t.Fatalf("call: %v, want CLIENT_TIMEOUT", err)
	}
	err = shutdownWithin(t, q)
	wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t19dial" Dial to `+e.URL().Address())
}

func TestT19_2_ShutdownBoundedWhenHeartbeatStopBlocks(t *testing.T) {
	g := t19Gate(t)
	cat := testCatalogs(t)
	hb := &t19Heartbeat{name: "t19stop", gate: g, side: spi.Consumer, blockStop: true}
	if err := cat.Heartbeat.Register(hb, t19Origin); err != nil {
		t.Fatal(err)
	}
	_, e := provider(t)
	q, logs := t19Node(t, cat)
	r, err := q.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?heartbeat=t19stop&timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	err = shutdownWithin(t, q)
	wantLeftRunning(t, err, logs, `kernel: shutdown: heartbeat "t19stop" stop (closing the channel to `+e.URL().Address())
}

func TestT19_2_ExportBoundedWhenListenNeverReturns(t *testing.T) {
	g := t19Gate(t)
	cat := testCatalogs(t)
	if err := cat.Transport.Register(&t19Transport{name: "t19listen", gate: g, blockListen: true}, t19Origin); err != nil {
		t.Fatal(err)
	}
	p, logs := t19Node(t, cat)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t19listen"))
		done <- err
	}()
	select {
	case err := <-done:
		wantLeftRunning(t, err, logs, `kernel: export demo.Echo: transport "t19listen" Listen on 127.0.0.1:0`)
	case <-time.After(3 * time.Second):
		t.Fatal("Export(1s ctx) still blocked after 3s")
	}
	// The node is not held by the Listen left running.
	if err := shutdownWithin(t, p); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestT19_3_HeartbeatWatchPanicFailsTheConnection(t *testing.T) {
	t.Run("consumer", func(t *testing.T) {
		cat := testCatalogs(t)
		hb := &t19Heartbeat{name: "t19panic", side: spi.Consumer, panicWatch: true}
		if err := cat.Heartbeat.Register(hb, t19Origin); err != nil {
			t.Fatal(err)
		}
		_, e := provider(t)
		q, logs := t19Node(t, cat)
		r, err := q.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?heartbeat=t19panic&timeout=1s&reconnect.backoff=20ms"), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Invoke(ctxT(t), "Echo", "x")
		if spi.StatusOf(err) == spi.StatusOK || !strings.Contains(err.Error(), `heartbeat "t19panic" Watch panicked: t19 Watch exploded`) {
			t.Fatalf("call: %v, want a failure naming the heartbeat's panic", err)
		}
		// The connection manager goes on redialing, as after any failed
		// connection.
		eventually(t, "a redial", func() bool { return hb.watches.Load() >= 3 })
		wantPanicLogged(t, logs, "heartbeat Watch panicked", "t19panic")
	})
	t.Run("provider", func(t *testing.T) {
		cat := testCatalogs(t)
		hb := &t19Heartbeat{name: "t19panic", side: spi.Provider, panicWatch: true}
		if err := cat.Heartbeat.Register(hb, t19Origin); err != nil {
			t.Fatal(err)
		}
		p, logs := t19Node(t, cat)
		e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?heartbeat=t19panic"))
		if err != nil {
			t.Fatal(err)
		}
		r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?heartbeat=idle&timeout=1s")
		if _, err := r.Invoke(ctxT(t), "Echo", "x"); err == nil {
			t.Fatal("call answered by a provider whose heartbeat Watch panicked on every connection")
		}
		wantPanicLogged(t, logs, "heartbeat Watch panicked", "t19panic")
	})
	t.Run("stop", func(t *testing.T) {
		cat := testCatalogs(t)
		hb := &t19Heartbeat{name: "t19stoppanic", side: spi.Consumer, panicStop: true}
		if err := cat.Heartbeat.Register(hb, t19Origin); err != nil {
			t.Fatal(err)
		}
		_, e := provider(t)
		q, logs := t19Node(t, cat)
		r, err := q.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?heartbeat=t19stoppanic&timeout=2s"), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
			t.Fatal(err)
		}
		if err := shutdownWithin(t, q); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		wantPanicLogged(t, logs, "heartbeat stop panicked", "t19stoppanic")
	})
}

// wantPanicLogged fails unless logs has an Error record msg naming the
// heartbeat, with a stack.
func wantPanicLogged(t *testing.T, logs recordLog, msg, heartbeat string) {
	t.Helper()
	var found []logRecord
	eventually(t, "the panic logged", func() bool { found = logs.find(msg); return len(found) > 0 })
	r := found[0]
	if r.level != slog.LevelError || r.attrs["heartbeat"] != heartbeat || !strings.Contains(r.attrs["stack"], "goroutine") {
		t.Errorf("logged %v %q %v: want Error, heartbeat %s, a stack", r.level, r.msg, r.attrs["heartbeat"], heartbeat)
	}
}

// hostPortAddr is a net.Addr that is not a *net.TCPAddr but whose String
// is host:port.
type hostPortAddr string

func (a hostPortAddr) Network() string { return "t19" }
func (a hostPortAddr) String() string  { return string(a) }

func TestT19_5_ListenerAddrWithoutPort(t *testing.T) {
	cat := testCatalogs(t)
	sock := &t19Transport{name: "t19unix", addr: func(net.Addr) net.Addr { return &net.UnixAddr{Name: "/tmp/x.sock", Net: "unix"} }}
	plain := &t19Transport{name: "t19plain", addr: func(a net.Addr) net.Addr { return hostPortAddr(a.String()) }}
	for _, b := range []*t19Transport{sock, plain} {
		if err := cat.Transport.Register(b, t19Origin); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := t19Node(t, cat)
	_, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t19unix"))
	want := `kernel: export demo.Echo: transport "t19unix": listener address /tmp/x.sock has no port; a listener's Addr must give host:port (a *net.TCPAddr or an address whose String is host:port)`
	if err == nil || err.Error() != want {
		t.Fatalf("export: %v\nwant %s", err, want)
	}
	// An Addr whose String is host:port publishes that port.
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t19plain"))
	if err != nil {
		t.Fatal(err)
	}
	if e.URL().Port() == 0 {
		t.Fatalf("exported at %s", e.URL().Address())
	}
	q, _ := t19Node(t, cat)
	r := refer(t, q, "airnode://"+e.URL().Address()+"/demo.Echo?transport=t19plain&timeout=2s")
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
}

func TestT19_2_ExportAndReferBoundedWhenRegistryBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		sub  bool
		want string
	}{
		{"Register", false, `kernel: export demo.Echo: registry "t19reg" Register of demo.Echo`},
		{"Subscribe", true, `kernel: refer demo.Echo: registry "t19reg" Subscribe of demo.Echo`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := t19Gate(t)
			cat := testCatalogs(t)
			rb := &t19Registry{in: memory.NewBuilder(), gate: g, blockReg: !tc.sub, blockSub: tc.sub}
			if err := cat.Registry.Register(rb, t19Origin); err != nil {
				t.Fatal(err)
			}
			n, logs := t19Node(t, cat, WithRegistry(spi.MustParse("t19reg://x")))
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				var err error
				if tc.sub {
					_, err = n.Refer(ctx, spi.MustParse("airnode:///demo.Echo"), spi.URL{})
				} else {
					_, err = n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
				}
				done <- err
			}()
			select {
			case err := <-done:
				wantLeftRunning(t, err, logs, tc.want)
			case <-time.After(3 * time.Second):
				t.Fatal("still blocked after 3s (ctx 1s)")
			}
			if err := shutdownWithin(t, n); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		})
	}
}

func TestT19_2_ShutdownBoundedWhenProviderSessionCloseBlocks(t *testing.T) {
	g := t19Gate(t)
	cat := testCatalogs(t)
	if err := cat.Transport.Register(&t19Transport{name: "t19sc", gate: g, blockSClose: true}, t19Origin); err != nil {
		t.Fatal(err)
	}
	p, logs := t19Node(t, cat)
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t19sc"))
	if err != nil {
		t.Fatal(err)
	}
	q, _ := t19Node(t, cat)
	r := refer(t, q, "airnode://"+e.URL().Address()+"/demo.Echo?transport=t19sc&timeout=2s")
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	err = shutdownWithin(t, p)
	wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t19sc" session Close (the connection from `, " to "+e.URL().Address()+")")
}
