package kernel

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// tester21 A, B, C and E: a failed session Close ends the wait for its
// connection at once; the blocking calls are named for what they are;
// every panic of a step is in Shutdown's error; "calls in flight were not
// answered" only when there were calls. The fakes are fault_test.go's,
// and t21Transport below for the provider session calls they lack.

// t21Transport is the bundled tcp transport, named name, whose provider
// sessions' Close does as sclose says ("err": return an error without
// closing; "closepanic": close, then panic; "errnetconn": return an
// error without closing, the session giving its net.Conn) and whose
// provider sessions' Accept blocks on gate when saccept is set.
type t21Transport struct {
	name    string
	gate    chan struct{}
	sclose  string
	saccept bool
	cclose  bool
}

func (b *t21Transport) Name() string { return b.name }
func (b *t21Transport) Build(u spi.URL) (spi.Transport, error) {
	in, err := tcp.Builder{}.Build(u)
	return &t21Tr{Transport: in, b: b}, err
}

type t21Tr struct {
	spi.Transport
	b *t21Transport
}

func (t *t21Tr) Listen(a string) (spi.Listener, error) {
	l, err := t.Transport.Listen(a)
	if err != nil {
		return nil, err
	}
	return &t21Listener{Listener: l, b: t.b}, nil
}

func (t *t21Tr) Dial(ctx context.Context, a string) (spi.Session, error) {
	s, err := t.Transport.Dial(ctx, a)
	if err != nil {
		return nil, err
	}
	return &t21ConsumerSession{Session: s, b: t.b}, nil
}

type t21ConsumerSession struct {
	spi.Session
	b *t21Transport
}

func (s *t21ConsumerSession) Close() error {
	if s.b.cclose {
		<-s.b.gate
	}
	return s.Session.Close()
}

type t21Listener struct {
	spi.Listener
	b *t21Transport
}

func (l *t21Listener) Accept() (spi.Session, error) {
	s, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &t21Session{Session: s, b: l.b}, nil
}

// t21Session is a provider's session.
type t21Session struct {
	spi.Session
	b *t21Transport
}

func (s *t21Session) Accept() (io.ReadWriteCloser, error) {
	if s.b.saccept {
		<-s.b.gate
	}
	return s.Session.Accept()
}

func (s *t21Session) Close() error {
	switch s.b.sclose {
	case "err":
		return errors.New("t21 session Close failed")
	case "closepanic":
		_ = s.Session.Close()
		panic("t21 session Close exploded after closing")
	}
	return s.Session.Close()
}

// shutdownFor runs n.Shutdown with a ctx of d and fails the test unless
// it returns within bound; it returns Shutdown's error and how long it
// took.
func shutdownFor(t *testing.T, n *Node, d, bound time.Duration) (error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- n.Shutdown(ctx) }()
	select {
	case err := <-done:
		took := time.Since(start)
		t.Logf("Shutdown(%v ctx) returned after %v: %v", d, took.Round(time.Millisecond), err)
		return err, took
	case <-time.After(bound):
		t.Fatalf("Shutdown(%v ctx) still blocked after %v", d, bound)
		return nil, 0
	}
}

// wantNoLog fails if logs has a record whose message has s.
func wantNoLog(t *testing.T, logs recordLog, s string) {
	t.Helper()
	for _, r := range logs.find("") {
		if strings.Contains(r.msg, s) {
			t.Errorf("logged %q (level %v): want no record saying %q", r.msg, r.level, s)
		}
	}
}

// wantPanicError fails unless err reaches an *extension.PanicError of
// the point and method given.
func wantPanicError(t *testing.T, err error, point, method string) {
	t.Helper()
	var pe *extension.PanicError
	if !errors.As(err, &pe) || pe.Point != point || pe.Method != method {
		t.Errorf("error %v: want an *extension.PanicError of %s %s (got %+v)", err, point, method, pe)
	}
}

// A provider session Close that panics (or fails) without closing: the
// wait for that connection ends at once, not at ctx's end (tester21 A
// measured 8.1 s for an 8 s ctx), and the error and the log say "failed".
func TestT21_A_FailedSessionCloseEndsTheWait(t *testing.T) {
	t.Run("Panic", func(t *testing.T) {
		p, logs, _, _ := callOver(t, testCatalogs(t), &faultTransport{name: "t21sclose", sclose: boom})
		err, took := shutdownFor(t, p, 8*time.Second, 7*time.Second)
		if took > 3*time.Second {
			t.Errorf("Shutdown took %v for a Close that panicked at once; want well under its 8 s ctx", took)
		}
		wantPanicError(t, err, extension.PointTransport, "Session.Close")
		for _, w := range []string{`transport "t21sclose" session Close (the connection from `, " failed: ", "left open"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Shutdown: %v; want it to say %q", err, w)
			}
		}
		var left *LeftRunningError
		if errors.As(err, &left) {
			t.Errorf("Shutdown: %v; a Close that returned is not left running", err)
		}
		wantNoLog(t, logs, "did not return")
	})
	for _, tc := range []struct {
		mode, want string
	}{
		{"err", "the connection was given up and left open"},
		{"closepanic", "the connection closed all the same"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			tr := &t21Transport{name: "t21sc" + tc.mode, sclose: tc.mode}
			p, logs, _, _ := callOver(t, testCatalogs(t), tr)
			err, took := shutdownFor(t, p, 8*time.Second, 7*time.Second)
			if took > 3*time.Second {
				t.Errorf("Shutdown took %v; want well under its 8 s ctx", took)
			}
			for _, w := range []string{`transport "` + tr.name + `" session Close (the connection from `, " failed: ", tc.want} {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Shutdown: %v; want it to say %q", err, w)
				}
			}
			if tc.mode == "closepanic" {
				wantPanicError(t, err, extension.PointTransport, "Session.Close")
			}
			wantNoLog(t, logs, "did not return")
		})
	}
	t.Run("ClosedByItsConsumerFirst", func(t *testing.T) {
		// The consumer closes the connection before the provider's
		// Shutdown: the provider session's Close, panicking then, is
		// reported by that Shutdown all the same.
		p, _, _, r := callOver(t, testCatalogs(t), &faultTransport{name: "t21scc", sclose: boom})
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		err, _ := shutdownFor(t, p, 2*time.Second, 5*time.Second)
		wantPanicError(t, err, extension.PointTransport, "Session.Close")
		if err == nil || !strings.Contains(err.Error(), "the connection closed all the same") {
			t.Errorf("Shutdown: %v; want it to say the connection closed all the same", err)
		}
	})
	t.Run("AfterUnexport", func(t *testing.T) {
		p, _, e, _ := callOver(t, testCatalogs(t), &faultTransport{name: "t21scu", sclose: boom})
		if err := e.Unexport(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		err, took := shutdownFor(t, p, 2*time.Second, 5*time.Second)
		if took > 1500*time.Millisecond {
			t.Errorf("Shutdown took %v; want well under its 2 s ctx", took)
		}
		wantPanicError(t, err, extension.PointTransport, "Session.Close")
	})
}

// Blocking calls are named for what they are (tester21 B).
func TestT21_B_BlockingCallsNamed(t *testing.T) {
	t.Run("ConsumerSessionOpen", func(t *testing.T) {
		g := faultGate(t)
		cat := testCatalogs(t)
		tr := &faultTransport{name: "t21open", gate: g, open: block}
		if err := cat.Transport.Register(tr, faultOrigin); err != nil {
			t.Fatal(err)
		}
		// The provider is shut down with a short ctx: its connection
		// never gets a stream (the consumer's Open blocks).
		_, e := provider(t, WithShutdownTimeout(300*time.Millisecond))
		q, logs := faultNode(t, cat)
		_ = refer(t, q, "airnode://"+e.URL().Address()+"/demo.Echo?transport=t21open&timeout=1s")
		time.Sleep(200 * time.Millisecond) // the Dial returned, the Open blocks
		err := shutdownWithin(t, q)
		wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t21open" session Open (the connection to `+e.URL().Address()+")")
		if strings.Contains(err.Error(), "Dial") {
			t.Errorf("Shutdown: %v; the Dial returned, the Open did not", err)
		}
	})
	t.Run("ConsumerHeartbeatWatch", func(t *testing.T) {
		g := faultGate(t)
		cat := testCatalogs(t)
		hb := &faultHeartbeat{name: "t21cw", gate: g, side: spi.Consumer, watch: block}
		if err := cat.Heartbeat.Register(hb, faultOrigin); err != nil {
			t.Fatal(err)
		}
		q, logs, e, _ := referFrom(t, cat, "heartbeat=t21cw&timeout=1s")
		eventually(t, "the Watch called", func() bool { return hb.watches.Load() > 0 })
		err := shutdownWithin(t, q)
		wantLeftRunning(t, err, logs, `kernel: shutdown: heartbeat "t21cw" Watch (the connection to `+e.URL().Address()+")")
		if strings.Contains(err.Error(), "Dial") {
			t.Errorf("Shutdown: %v; the Dial returned, the Watch did not", err)
		}
	})
	t.Run("ProviderHeartbeatWatch", func(t *testing.T) {
		g := faultGate(t)
		p, logs, e := exportHeartbeat(t, &faultHeartbeat{name: "t21pw", gate: g, side: spi.Provider, watch: block})
		r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?heartbeat=idle&timeout=2s")
		// The Watch blocks on a goroutine of its own: the connection serves.
		if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
			t.Fatal(err)
		}
		err := shutdownWithin(t, p)
		wantLeftRunning(t, err, logs, `kernel: shutdown: heartbeat "t21pw" Watch (the connection from `, " to "+e.URL().Address()+")")
		if strings.Contains(err.Error(), "its exchange's shutdown") {
			t.Errorf("Shutdown: %v; want the Watch named, not the server", err)
		}
	})
	t.Run("ProviderSessionAccept", func(t *testing.T) {
		g := faultGate(t)
		cat := testCatalogs(t)
		tr := &t21Transport{name: "t21sacc", gate: g, saccept: true}
		if err := cat.Transport.Register(tr, faultOrigin); err != nil {
			t.Fatal(err)
		}
		p, logs := faultNode(t, cat)
		e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t21sacc"))
		if err != nil {
			t.Fatal(err)
		}
		q := consumerOn(t, cat)
		_ = refer(t, q, "airnode://"+e.URL().Address()+"/demo.Echo?transport=t21sacc&timeout=1s")
		time.Sleep(300 * time.Millisecond) // accepted: its session Accept blocks
		err = shutdownWithin(t, p)
		wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t21sacc" session Accept (the connection from `, " to "+e.URL().Address()+")")
		if strings.Contains(err.Error(), "context deadline exceeded") {
			t.Errorf("Shutdown: %v; want the Accept named, not the ctx's error", err)
		}
		for _, r := range logs.find("shutdown: handlers still running") {
			t.Errorf("logged %q with handlers=%s: no handler runs, a session Accept does", r.msg, r.attrs["handlers"])
		}
	})
}

// Panics are returned, not only logged (tester21 C).
func TestT21_C_PanicsReturned(t *testing.T) {
	t.Run("HeartbeatStop", func(t *testing.T) {
		n, logs, e := exportHeartbeat(t, &faultHeartbeat{name: "t21stop", stop: boom})
		r := refer(t, n, "airnode://"+e.URL().Address()+"/demo.Echo?heartbeat=t21stop&timeout=2s")
		if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
			t.Fatal(err)
		}
		err, _ := shutdownFor(t, n, time.Second, 4*time.Second)
		wantPanicError(t, err, extension.PointHeartbeat, "stop")
		for _, w := range []string{`heartbeat "t21stop" stop (the connection from `, `heartbeat "t21stop" stop (the connection to `} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Shutdown: %v; want it to say %q (both sides' stops panicked)", err, w)
			}
		}
		wantErrorLogged(t, logs, "heartbeat stop panicked")
	})
	t.Run("EveryUnregister", func(t *testing.T) {
		cat := testCatalogs(t)
		n, _ := faultNode(t, cat, withFaultRegistry(t, cat, &faultRegistry{name: "t21reg", unregister: boom}))
		if _, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), spi.URL{}); err != nil {
			t.Fatal(err)
		}
		err, _ := shutdownFor(t, n, time.Second, 4*time.Second)
		for _, w := range []string{`registry "t21reg" Unregister of demo.Echo panicked`, `registry "t21reg" Unregister of the consumer entry of demo.Echo panicked`} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Shutdown: %v; want it to say %q", err, w)
			}
		}
	})
	t.Run("ListenerClose", func(t *testing.T) {
		cat := testCatalogs(t)
		tr := &faultTransport{name: "t21lclose", lclose: boom}
		if err := cat.Transport.Register(tr, faultOrigin); err != nil {
			t.Fatal(err)
		}
		n, logs := faultNode(t, cat)
		e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t21lclose"))
		if err != nil {
			t.Fatal(err)
		}
		// The listener the transport leaves open is closed by the test.
		n.mu.Lock()
		for _, srv := range n.servers {
			fl := srv.l.Listener.(*faultListener)
			t.Cleanup(func() { _ = fl.Listener.Close() })
		}
		n.mu.Unlock()
		err, took := shutdownFor(t, n, 8*time.Second, 7*time.Second)
		if took > 3*time.Second {
			t.Errorf("Shutdown took %v; a Close that panicked at once must not cost the 8 s ctx", took)
		}
		wantPanicError(t, err, extension.PointTransport, "Listener.Close")
		want := `kernel: shutdown: transport "t21lclose" listener Close on ` + e.URL().Address() + " failed: "
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Shutdown: %v; want it to say %q", err, want)
		}
		var left *LeftRunningError
		if errors.As(err, &left) {
			t.Errorf("Shutdown: %v; the Close returned (panicking): nothing is named left running", err)
		}
		wantErrorLogged(t, logs, `transport "t21lclose": Listener.Close panicked`)
	})
}

// No "calls in flight were not answered" when no call was in flight
// (tester21 E): a consumer whose connection's first ping is never
// answered, and whose session Close then blocks, has a connection open
// and no call.
func TestT21_E_NoCallsNoWarning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // silent: never answers
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	g := faultGate(t)
	cat := testCatalogs(t)
	tr := &t21Transport{name: "t21cclose", gate: g, cclose: true}
	if err := cat.Transport.Register(tr, faultOrigin); err != nil {
		t.Fatal(err)
	}
	n, logs := faultNode(t, cat)
	_ = refer(t, n, "airnode://"+ln.Addr().String()+"/demo.Echo?transport=t21cclose&connect.timeout=10s&timeout=1s")
	time.Sleep(200 * time.Millisecond) // dialed; the first ping waits
	err, _ = shutdownFor(t, n, 500*time.Millisecond, 4*time.Second)
	if err != nil && strings.Contains(err.Error(), "providers may have run them") {
		t.Errorf("Shutdown: %v; no call was in flight", err)
	}
	wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t21cclose" session Close (the channel to `+ln.Addr().String()+" failed its first ping)")
}
