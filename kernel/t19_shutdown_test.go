package kernel

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// tester19 findings 2, 3 (heartbeat Watch) and 5: extensions that block
// or panic where the kernel waits on them (the fakes of fault_test.go),
// and a listener whose Addr is not a *net.TCPAddr.

func TestT19_2_ShutdownBoundedWhenListenerCloseBlocks(t *testing.T) {
	// A consumer connected: its connection still closes although the
	// listener's Close never returns.
	p, logs, e, r := callOver(t, testCatalogs(t), &faultTransport{name: "t19lc", gate: faultGate(t), lclose: block})
	conn := r.Providers()[0].(*remoteInvoker).conns[0]
	err := shutdownWithin(t, p)
	wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t19lc" listener Close on `+e.URL().Address())
	eventually(t, "the consumer's connection closed", func() bool { return !conn.ready() })
}

func TestT19_2_ShutdownBoundedWhenRegistryBlocks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reg      *faultRegistry
		wantStep string
	}{
		{"Unregister", &faultRegistry{unregister: block}, `kernel: shutdown: registry "t19reg" Unregister of demo.Echo`},
		{"Close", &faultRegistry{close: block}, `kernel: shutdown: registry "t19reg" Close`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.reg.name, tc.reg.gate = "t19reg", faultGate(t)
			cat := testCatalogs(t)
			p, logs := faultNode(t, cat, withFaultRegistry(t, cat, tc.reg))
			if _, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
				t.Fatal(err)
			}
			err := shutdownWithin(t, p)
			wantLeftRunning(t, err, logs, tc.wantStep)
		})
	}
}

func TestT19_2_ShutdownBoundedWhenDialIgnoresCtx(t *testing.T) {
	g := faultGate(t)
	cat := testCatalogs(t)
	if err := cat.Transport.Register(&faultTransport{name: "t19dial", gate: g, dial: block}, faultOrigin); err != nil {
		t.Fatal(err)
	}
	q, logs, e, r := referFrom(t, cat, "transport=t19dial&timeout=300ms&connect.timeout=200ms")
	// The call is bounded by its timeout, the Dial not returning.
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); spi.StatusOf(err) != spi.StatusClientTimeout {
		t.Fatalf("call: %v, want CLIENT_TIMEOUT", err)
	}
	err := shutdownWithin(t, q)
	wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t19dial" Dial to `+e.URL().Address())
}

func TestT19_2_ShutdownBoundedWhenHeartbeatStopBlocks(t *testing.T) {
	g := faultGate(t)
	cat := testCatalogs(t)
	hb := &faultHeartbeat{name: "t19stop", gate: g, side: spi.Consumer, stop: block}
	if err := cat.Heartbeat.Register(hb, faultOrigin); err != nil {
		t.Fatal(err)
	}
	q, logs, e, r := referFrom(t, cat, "heartbeat=t19stop&timeout=2s")
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	err := shutdownWithin(t, q)
	wantLeftRunning(t, err, logs, `kernel: shutdown: heartbeat "t19stop" stop (closing the channel to `+e.URL().Address())
}

func TestT19_2_ExportBoundedWhenListenNeverReturns(t *testing.T) {
	g := faultGate(t)
	cat := testCatalogs(t)
	if err := cat.Transport.Register(&faultTransport{name: "t19listen", gate: g, listen: block}, faultOrigin); err != nil {
		t.Fatal(err)
	}
	p, logs := faultNode(t, cat)
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
		hb := &faultHeartbeat{name: "t19panic", side: spi.Consumer, watch: boom}
		if err := cat.Heartbeat.Register(hb, faultOrigin); err != nil {
			t.Fatal(err)
		}
		_, logs, _, r := referFrom(t, cat, "heartbeat=t19panic&timeout=1s&reconnect.backoff=20ms")
		_, err := r.Invoke(ctxT(t), "Echo", "x")
		if spi.StatusOf(err) == spi.StatusOK || !strings.Contains(err.Error(), `heartbeat "t19panic" Watch panicked: t19 Watch exploded`) {
			t.Fatalf("call: %v, want a failure naming the heartbeat's panic", err)
		}
		// The connection manager goes on redialing, as after any failed
		// connection.
		eventually(t, "a redial", func() bool { return hb.watches.Load() >= 3 })
		wantPanicLogged(t, logs, "heartbeat Watch panicked", "t19panic")
	})
	t.Run("provider", func(t *testing.T) {
		hb := &faultHeartbeat{name: "t19panic", side: spi.Provider, watch: boom}
		_, logs, e := exportHeartbeat(t, hb)
		r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?heartbeat=idle&timeout=1s&reconnect.backoff=20ms")
		// The provider's Watch runs on a goroutine of its own (tester21
		// B), so a first call may be answered before it panics; then the
		// provider closes the connection, and each redial meets the same
		// fate: the process lives on and says why.
		_, _ = r.Invoke(ctxT(t), "Echo", "x")
		eventually(t, "the provider closing connection after connection", func() bool { return hb.watches.Load() >= 2 })
		wantPanicLogged(t, logs, "heartbeat Watch panicked", "t19panic")
	})
	t.Run("stop", func(t *testing.T) {
		cat := testCatalogs(t)
		hb := &faultHeartbeat{name: "t19stoppanic", side: spi.Consumer, stop: boom}
		if err := cat.Heartbeat.Register(hb, faultOrigin); err != nil {
			t.Fatal(err)
		}
		q, logs, _, r := referFrom(t, cat, "heartbeat=t19stoppanic&timeout=2s")
		if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
			t.Fatal(err)
		}
		// The panic fails the step: Shutdown returns it (tester21 C).
		err := shutdownWithin(t, q)
		var pe *extension.PanicError
		if !errors.As(err, &pe) || pe.Method != "stop" {
			t.Fatalf("Shutdown: %v; want the stop's *extension.PanicError", err)
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
	sock := &faultTransport{name: "t19unix", addr: func(net.Addr) net.Addr { return &net.UnixAddr{Name: "/tmp/x.sock", Net: "unix"} }}
	plain := &faultTransport{name: "t19plain", addr: func(a net.Addr) net.Addr { return hostPortAddr(a.String()) }}
	for _, b := range []*faultTransport{sock, plain} {
		if err := cat.Transport.Register(b, faultOrigin); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := faultNode(t, cat)
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
	q, _ := faultNode(t, cat)
	r := refer(t, q, "airnode://"+e.URL().Address()+"/demo.Echo?transport=t19plain&timeout=2s")
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
}

func TestT19_2_ExportAndReferBoundedWhenRegistryBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		sub  bool
		reg  *faultRegistry
		want string
	}{
		{"Register", false, &faultRegistry{register: block}, `kernel: export demo.Echo: registry "t19reg" Register of demo.Echo`},
		{"Subscribe", true, &faultRegistry{subscribe: block}, `kernel: refer demo.Echo: registry "t19reg" Subscribe of demo.Echo`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.reg.name, tc.reg.gate = "t19reg", faultGate(t)
			cat := testCatalogs(t)
			n, logs := faultNode(t, cat, withFaultRegistry(t, cat, tc.reg))
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
	p, logs, e, _ := callOver(t, testCatalogs(t), &faultTransport{name: "t19sc", gate: faultGate(t), sclose: block})
	err := shutdownWithin(t, p)
	wantLeftRunning(t, err, logs, `kernel: shutdown: transport "t19sc" session Close (the connection from `, " to "+e.URL().Address()+")")
}
