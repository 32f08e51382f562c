package kernel

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Fault-injecting extensions for the tests of the calls the kernel waits
// on (tester19, tester20): a transport (with its listener and sessions),
// a registry and a heartbeat, each call of which passes through to the
// bundled extension, blocks or panics as the fake's per-call fault says.
// A blocked call waits on a gate the test closes in t.Cleanup
// (faultGate), ignoring any ctx, so that the goroutines Shutdown and
// Export leave behind end before goleak looks (TestMain). A panic's value
// is "<tag> <call> exploded", tag being the fake's name's first three
// characters (t19, t20).

// fault is what one call of a fake extension does.
type fault int8

const (
	pass  fault = iota // call the bundled extension
	block              // wait until the gate closes (ignoring ctx), then call through
	boom               // panic "<tag> <call> exploded"
)

// do blocks on gate or panics as f says; name is the fake's, call the
// call's in the panic value.
func (f fault) do(gate chan struct{}, name, call string) {
	switch f {
	case block:
		<-gate
	case boom:
		panic(name[:3] + " " + call + " exploded")
	}
}

// panicsLeft panics, as boom does, while n (the panics left) is above 0.
func panicsLeft(n *atomic.Int64, name, call string) {
	if n.Add(-1) >= 0 {
		boom.do(nil, name, call)
	}
}

const faultOrigin = extension.Origin("fault test")

// faultGate returns a channel closed when the test ends.
func faultGate(t *testing.T) chan struct{} {
	g := make(chan struct{})
	t.Cleanup(func() { close(g) })
	return g
}

// faultTransport is the bundled tcp transport, named name, whose calls
// do as its faults say: Listen, Dial (a blocked Dial then fails), the
// listener's Close, the consumer sessions' Open, the provider sessions'
// Close; the listener's Accept and the provider sessions' Accept panic
// for their first accepts, saccepts calls. addr, when set, replaces the
// listener's Addr.
type faultTransport struct {
	name                 string
	gate                 chan struct{}
	listen, dial, lclose fault
	open, sclose         fault
	accepts, saccepts    atomic.Int64 // panics left
	addr                 func(net.Addr) net.Addr
}

func (b *faultTransport) Name() string { return b.name }
func (b *faultTransport) Build(u spi.URL) (spi.Transport, error) {
	in, err := tcp.Builder{}.Build(u)
	return &faultTr{b: b, in: in}, err
}

type faultTr struct {
	b  *faultTransport
	in spi.Transport
}

func (t *faultTr) Listen(a string) (spi.Listener, error) {
	t.b.listen.do(t.b.gate, t.b.name, "Listen")
	l, err := t.in.Listen(a)
	if err != nil {
		return nil, err
	}
	return &faultListener{Listener: l, b: t.b}, nil
}

func (t *faultTr) Dial(ctx context.Context, a string) (spi.Session, error) {
	t.b.dial.do(t.b.gate, t.b.name, "Dial")
	if t.b.dial == block {
		return nil, errors.New("fault: dial released")
	}
	s, err := t.in.Dial(ctx, a)
	if err != nil {
		return nil, err
	}
	return &faultSession{Session: s, b: t.b, consumer: true}, nil
}

type faultListener struct {
	spi.Listener
	b *faultTransport
}

func (l *faultListener) Accept() (spi.Session, error) {
	panicsLeft(&l.b.accepts, l.b.name, "Accept")
	s, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &faultSession{Session: s, b: l.b}, nil
}

func (l *faultListener) Close() error {
	l.b.lclose.do(l.b.gate, l.b.name, "listener Close")
	return l.Listener.Close()
}

func (l *faultListener) Addr() net.Addr {
	if l.b.addr != nil {
		return l.b.addr(l.Listener.Addr())
	}
	return l.Listener.Addr()
}

// faultSession is a consumer's (Dial) or a provider's (Accept) session.
type faultSession struct {
	spi.Session
	b        *faultTransport
	consumer bool
}

func (s *faultSession) Open() (io.ReadWriteCloser, error) {
	if s.consumer {
		s.b.open.do(s.b.gate, s.b.name, "Open")
	}
	return s.Session.Open()
}

func (s *faultSession) Accept() (io.ReadWriteCloser, error) {
	if !s.consumer {
		panicsLeft(&s.b.saccepts, s.b.name, "session Accept")
	}
	return s.Session.Accept()
}

func (s *faultSession) Close() error {
	if !s.consumer {
		s.b.sclose.do(s.b.gate, s.b.name, "session Close")
	}
	return s.Session.Close()
}

// faultRegistry is the memory registry, named name, whose calls do as
// its faults say. Every registry it builds shares one memory registry.
type faultRegistry struct {
	name                                   string
	gate                                   chan struct{}
	register, subscribe, unregister, close fault
	once                                   sync.Once
	in                                     *memory.Builder
}

func (b *faultRegistry) Name() string { return b.name }
func (b *faultRegistry) Build(u spi.URL) (spi.Registry, error) {
	b.once.Do(func() { b.in = memory.NewBuilder() })
	r, err := b.in.Build(u.WithScheme("memory"))
	return &faultReg{Registry: r, b: b}, err
}

type faultReg struct {
	spi.Registry
	b *faultRegistry
}

func (r *faultReg) Register(ctx context.Context, u spi.URL) error {
	r.b.register.do(r.b.gate, r.b.name, "Register")
	return r.Registry.Register(ctx, u)
}

func (r *faultReg) Subscribe(ctx context.Context, u spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	r.b.subscribe.do(r.b.gate, r.b.name, "Subscribe")
	return r.Registry.Subscribe(ctx, u, notify)
}

func (r *faultReg) Unregister(ctx context.Context, u spi.URL) error {
	r.b.unregister.do(r.b.gate, r.b.name, "Unregister")
	return r.Registry.Unregister(ctx, u)
}

func (r *faultReg) Close() error {
	r.b.close.do(r.b.gate, r.b.name, "Close")
	return r.Registry.Close()
}

// withFaultRegistry registers rb on cat and returns the option making it
// a node's registry (address x).
func withFaultRegistry(t *testing.T, cat *extension.Catalogs, rb *faultRegistry) Option {
	t.Helper()
	if err := cat.Registry.Register(rb, faultOrigin); err != nil {
		t.Fatal(err)
	}
	return WithRegistry(spi.MustParse(rb.name + "://x"))
}

// faultHeartbeat is a heartbeat strategy named name whose Watch and
// whose stop do as watch and stop say; watches counts Watch calls. side,
// when set, limits the faults to that side.
type faultHeartbeat struct {
	name        string
	gate        chan struct{}
	side        spi.Side
	watch, stop fault
	watches     atomic.Int64
}

func (h *faultHeartbeat) Name() string                           { return h.name }
func (h *faultHeartbeat) Build(u spi.URL) (spi.Heartbeat, error) { return h, nil }
func (h *faultHeartbeat) Watch(ch spi.Channel) func() {
	h.watches.Add(1)
	if h.side != "" && ch.Side() != h.side {
		return func() {}
	}
	h.watch.do(h.gate, h.name, "Watch")
	return func() { h.stop.do(h.gate, h.name, "stop") }
}

// faultNode returns a node on cat logging to a recordLog, closed at the
// end of the test.
func faultNode(t *testing.T, cat *extension.Catalogs, opts ...Option) (*Node, recordLog) {
	t.Helper()
	logs := newRecordLog()
	opts = append([]Option{WithLogger(slog.New(logs)), WithShutdownWait(0)}, opts...)
	n := NewNode(cat, opts...)
	t.Cleanup(func() { _ = n.Close() })
	return n, logs
}

// consumerOn returns a quiet node on cat, closed at the end of the test.
func consumerOn(t *testing.T, cat *extension.Catalogs) *Node {
	t.Helper()
	n := NewNode(cat, WithLogger(quiet))
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// exportHeartbeat registers hb in fresh test catalogs and exports
// demo.Echo with heartbeat=hb.name on a fault node, which it returns with
// its log and the export.
func exportHeartbeat(t *testing.T, hb *faultHeartbeat) (*Node, recordLog, *Exporter) {
	t.Helper()
	cat := testCatalogs(t)
	if err := cat.Heartbeat.Register(hb, faultOrigin); err != nil {
		t.Fatal(err)
	}
	n, logs := faultNode(t, cat)
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?heartbeat="+hb.name))
	if err != nil {
		t.Fatal(err)
	}
	return n, logs, e
}

// callOver registers tr on cat, exports demo.Echo over it from a
// faultNode built with opts, and calls it once from a consumerOn cat
// (timeout 2 s); it returns the provider's node, log, exporter and the
// consumer's reference.
func callOver(t *testing.T, cat *extension.Catalogs, tr spi.TransportBuilder, opts ...Option) (*Node, recordLog, *Exporter, *Reference) {
	t.Helper()
	if err := cat.Transport.Register(tr, faultOrigin); err != nil {
		t.Fatal(err)
	}
	p, logs := faultNode(t, cat, opts...)
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport="+tr.Name()))
	if err != nil {
		t.Fatal(err)
	}
	r := refer(t, consumerOn(t, cat), "airnode://"+e.URL().Address()+"/demo.Echo?transport="+tr.Name()+"&timeout=2s")
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	return p, logs, e, r
}

// referFrom refers to a new provider of demo.Echo directly, with the URL
// query given, from a faultNode on cat; it returns the consumer's node,
// its log, the provider's exporter and the reference.
func referFrom(t *testing.T, cat *extension.Catalogs, query string) (*Node, recordLog, *Exporter, *Reference) {
	t.Helper()
	_, e := provider(t)
	q, logs := faultNode(t, cat)
	return q, logs, e, refer(t, q, "airnode://"+e.URL().Address()+"/demo.Echo?"+query)
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
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	// a bound, or the caller's deadline (which then matches it)
	bound := strings.Contains(err.Error(), "did not return within ")
	callers := strings.Contains(err.Error(), "did not return before the caller's context deadline passed, after ") && errors.Is(err, context.DeadlineExceeded)
	if !bound && !callers {
		t.Errorf("error %q says neither the bound nor the caller's deadline (matching context.DeadlineExceeded)", err)
	}
	for _, r := range logs.find("kernel: ") {
		if r.level == slog.LevelWarn && strings.Contains(r.msg, strings.TrimPrefix(want[0], "kernel: ")) && strings.Contains(r.msg, stoppedWaiting) {
			return
		}
	}
	t.Errorf("no Warn record says %q ... %s", want[0], stoppedWaiting)
}

// referListing refers u on c and waits (at most 10 s) until the
// reference lists n providers.
func referListing(t *testing.T, c *Node, u string, n int) *Reference {
	t.Helper()
	ref, err := c.Refer(context.Background(), spi.MustParse(u), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ref.Providers()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s %d providers, want %d", len(ref.Providers()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return ref
}
