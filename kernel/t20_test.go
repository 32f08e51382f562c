package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// tester20 N1, N2 and N3: panics in the extension calls the kernel and
// the exchange wait on (the fakes of fault_test.go), a Shutdown bound that
// does not grow with the number of stuck calls, and every stuck call
// named.

// wantStepPanic fails unless err is a *StepPanicError whose text is
// want, and logs has an Error record of that text with a stack.
func wantStepPanic(t *testing.T, err error, logs recordLog, want string) {
	t.Helper()
	var pe *StepPanicError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v: want a *StepPanicError", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	wantErrorLogged(t, logs, want)
}

// wantErrorLogged fails unless logs has, soon, an Error record whose
// message has want, with a stack.
func wantErrorLogged(t *testing.T, logs recordLog, want string) {
	t.Helper()
	eventually(t, "an Error record saying "+want, func() bool {
		for _, r := range logs.find("") {
			if r.level == slog.LevelError && strings.Contains(r.msg, strings.TrimPrefix(want, "kernel: ")) && strings.Contains(r.attrs["stack"], "goroutine") {
				return true
			}
		}
		return false
	})
}

func TestT20_1_PanicInListenOrRegistryFailsTheStep(t *testing.T) {
	for _, tc := range []struct {
		name string
		tr   *faultTransport
		reg  *faultRegistry
		op   string // export, refer, shutdown
		want string
	}{
		{"Listen", &faultTransport{name: "t20p", listen: boom}, nil, "export",
			`kernel: export demo.Echo: transport "t20p" Listen on 127.0.0.1:0 panicked: t20 Listen exploded`},
		{"Register", nil, &faultRegistry{name: "t20reg", register: boom}, "export",
			`kernel: export demo.Echo: registry "t20reg" Register of demo.Echo panicked: t20 Register exploded`},
		{"Subscribe", nil, &faultRegistry{name: "t20reg", subscribe: boom}, "refer",
			`kernel: refer demo.Echo: registry "t20reg" Subscribe of demo.Echo panicked: t20 Subscribe exploded`},
		{"Unregister", nil, &faultRegistry{name: "t20reg", unregister: boom}, "shutdown",
			`kernel: shutdown: registry "t20reg" Unregister of demo.Echo`},
		{"Close", nil, &faultRegistry{name: "t20reg", close: boom}, "shutdown",
			`kernel: shutdown: registry "t20reg" Close panicked: t20 Close exploded`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := testCatalogs(t)
			var opts []Option
			exportURL := "airnode://127.0.0.1:0/demo.Echo"
			if tc.tr != nil {
				if err := cat.Transport.Register(tc.tr, faultOrigin); err != nil {
					t.Fatal(err)
				}
				exportURL += "?transport=" + tc.tr.name
			}
			if tc.reg != nil {
				opts = append(opts, withFaultRegistry(t, cat, tc.reg))
			}
			n, logs := faultNode(t, cat, opts...)
			var err error
			switch tc.op {
			case "export":
				_, err = n.Export(ctxT(t), demo.New("p", 100), spi.MustParse(exportURL))
			case "refer":
				_, err = n.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo"), spi.URL{})
			case "shutdown":
				if _, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse(exportURL)); err != nil {
					t.Fatal(err)
				}
				err = shutdownWithin(t, n)
			}
			wantStepPanic(t, err, logs, tc.want)
			if !strings.Contains(err.Error(), "panicked: t20 ") {
				t.Errorf("error %q does not give the panic", err)
			}
			// The node goes on: a new export works (after a Shutdown, a
			// new node's).
			if tc.reg != nil {
				n, _ = faultNode(t, testCatalogs(t))
			}
			e, err := n.Export(ctxT(t), demo.New("p2", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?group=after"))
			if err != nil {
				t.Fatal(err)
			}
			r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?group=after&timeout=2s")
			if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A panic in a transport's Accept, Dial, stream Open, session Accept or
// Close fails that operation only, logged at Error with a stack naming
// the transport; the process and the other connections go on.
func TestT20_1_PanicInTransportCallsFailsTheConnection(t *testing.T) {
	t.Run("ListenerAccept", func(t *testing.T) {
		cat := testCatalogs(t)
		tr := &faultTransport{name: "t20acc"}
		tr.accepts.Store(2)
		if err := cat.Transport.Register(tr, faultOrigin); err != nil {
			t.Fatal(err)
		}
		p, logs := faultNode(t, cat)
		e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t20acc"))
		if err != nil {
			t.Fatal(err)
		}
		// The accept loop retries after its backoff, and then accepts.
		r := refer(t, consumerOn(t, cat), "airnode://"+e.URL().Address()+"/demo.Echo?transport=t20acc&timeout=3s")
		if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
			t.Fatal(err)
		}
		wantErrorLogged(t, logs, `transport "t20acc": Listener.Accept panicked: t20 Accept exploded`)
	})
	t.Run("SessionAccept", func(t *testing.T) {
		cat := testCatalogs(t)
		tr := &faultTransport{name: "t20sacc"}
		tr.saccepts.Store(1)
		if err := cat.Transport.Register(tr, faultOrigin); err != nil {
			t.Fatal(err)
		}
		p, logs := faultNode(t, cat)
		e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport=t20sacc"))
		if err != nil {
			t.Fatal(err)
		}
		// The first connection fails; the consumer redials and calls.
		r := refer(t, consumerOn(t, cat), "airnode://"+e.URL().Address()+"/demo.Echo?transport=t20sacc&timeout=3s&reconnect.backoff=20ms&retries=3")
		eventually(t, "a call answered", func() bool { _, err := r.Invoke(ctxT(t), "Echo", "x"); return err == nil })
		wantErrorLogged(t, logs, `transport "t20sacc": Session.Accept panicked: t20 session Accept exploded`)
	})
	for _, tc := range []struct {
		name string
		tr   *faultTransport
		want string
	}{
		{"Dial", &faultTransport{name: "t20dial", dial: boom}, `transport "t20dial": Dial panicked: t20 Dial exploded`},
		{"Open", &faultTransport{name: "t20open", open: boom}, `transport "t20open": Session.Open panicked: t20 Open exploded`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := testCatalogs(t)
			if err := cat.Transport.Register(tc.tr, faultOrigin); err != nil {
				t.Fatal(err)
			}
			q, logs, e, r := referFrom(t, cat, "transport="+tc.tr.name+"&timeout=1s&reconnect.backoff=20ms")
			_, err := r.Invoke(ctxT(t), "Echo", "x")
			if err == nil || !strings.Contains(err.Error(), "panicked: t20 ") {
				t.Fatalf("call: %v, want a failure naming the panic", err)
			}
			wantErrorLogged(t, logs, tc.want)
			// Other connections of the process go on.
			ok := refer(t, q, "airnode://"+e.URL().Address()+"/demo.Echo?timeout=2s")
			if _, err := ok.Invoke(ctxT(t), "Echo", "y"); err != nil {
				t.Fatal(err)
			}
			if err := shutdownWithin(t, q); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		})
	}
	t.Run("SessionClose", func(t *testing.T) {
		p, logs, _, _ := callOver(t, testCatalogs(t), &faultTransport{name: "t20sclose", sclose: boom})
		// The Close that panicked left its connection open (the transport
		// never closed it): Shutdown says so, naming the panic.
		err := shutdownWithin(t, p)
		want := `transport "t20sclose" session Close (the connection from `
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `Session.Close panicked: t20 session Close exploded`) {
			t.Fatalf("Shutdown: %v; want it to say %s... panicked", err, want)
		}
		wantErrorLogged(t, logs, `transport "t20sclose": Session.Close panicked: t20 session Close exploded`)
	})
}

// Shutdown with 40 services whose registry's Unregister blocks, 40
// references whose consumer entries' Unregister blocks too, and a
// provider session whose Close blocks: it returns within ctx's end +
// 1.5 s (the late window is shared, not 50 ms per stuck call), naming
// every stuck call.
func TestT20_2_ShutdownBoundWithManyStuckServices(t *testing.T) {
	const services = 40
	g := faultGate(t)
	cat := testCatalogs(t)
	reg := withFaultRegistry(t, cat, &faultRegistry{name: "t20reg", gate: g, unregister: block})
	tr := &faultTransport{name: "t20many", gate: g, sclose: block}
	if err := cat.Transport.Register(tr, faultOrigin); err != nil {
		t.Fatal(err)
	}
	n, logs := faultNode(t, cat, reg)
	for i := range services {
		if _, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:0/demo.Echo?group=g%d&transport=t20many", i))); err != nil {
			t.Fatal(err)
		}
		r, err := n.Refer(ctxT(t), spi.MustParse(fmt.Sprintf("airnode:///demo.Echo?group=g%d&transport=t20many&timeout=2s", i)), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- n.Shutdown(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown(1s ctx) still blocked after 10s")
	}
	took := time.Since(start)
	left := leftRunning(err)
	t.Logf("Shutdown(1s ctx) with %d stuck services returned after %v with %d LeftRunningErrors", services, took.Round(time.Millisecond), len(left))
	if took > 2500*time.Millisecond {
		t.Errorf("Shutdown(1s ctx) took %v; want within ctx + 1.5s", took)
	}
	var exports, consumers, sessions int
	for _, l := range left {
		switch {
		case strings.Contains(l.Step, `registry "t20reg" Unregister of the consumer entry of g`):
			consumers++
		case strings.Contains(l.Step, `registry "t20reg" Unregister of g`):
			exports++
		case strings.Contains(l.Step, `transport "t20many" session Close (the connection from `):
			sessions++
		case strings.Contains(l.Step, "(its directory's Close)"), strings.Contains(l.Step, `registry "t20reg" Close`),
			strings.HasPrefix(l.Step, "consumer connection to "), l.Step == "closing the consumer connections":
			// The directories' unsubscribes, the registry's Close and the
			// consumer connection's close (only the provider's sessions'
			// Close blocks) do not block: started after ctx's end they get
			// their share of the late window (20 ms each), which a starved
			// -race run can outlast; named then, still bounded. Seen under
			// load (two busy loops on 2 CPUs): the consumer connection 1
			// run in 10; "closing the consumer connections", the step's own
			// name when the connection had closed by the kernel's look, 2
			// in 20.
			t.Logf("named %q, which does not block (the machine was slow)", l.Step)
		default:
			t.Errorf("named %q, which does not block", l.Step)
		}
	}
	// Every provider entry's Unregister is named; the consumer entries'
	// (each bounded by 5 s, after ctx's end) too; the session is named.
	if exports != services || consumers != services || sessions < 1 {
		t.Errorf("named %d provider Unregisters, %d consumer Unregisters, %d session Closes; want %d, %d, >= 1\n%v", exports, consumers, sessions, services, services, err)
	}
	wantLeftRunning(t, left[0], logs, left[0].Error()[len("kernel: shutdown: "):strings.Index(left[0].Error(), " did not")])
}

// leftRunning returns the *LeftRunningErrors joined in err.
func leftRunning(err error) []*LeftRunningError {
	var out []*LeftRunningError
	var walk func(error)
	walk = func(e error) {
		if l, ok := e.(*LeftRunningError); ok {
			out = append(out, l)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		if u := errors.Unwrap(e); u != nil {
			walk(u)
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

func TestT20_3_ProviderHeartbeatStopBlockingIsNamed(t *testing.T) {
	g := faultGate(t)
	p, logs, e := exportHeartbeat(t, &faultHeartbeat{name: "t20hb", gate: g, side: spi.Provider, stop: block})
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?heartbeat=idle&timeout=2s")
	if _, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	err := shutdownWithin(t, p)
	wantLeftRunning(t, err, logs, `kernel: shutdown: heartbeat "t20hb" stop (the connection from `, " to "+e.URL().Address()+")")
	if strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("error %q: want the stuck stop named, not the ctx's error", err)
	}
	for _, r := range logs.find("handlers still running") {
		t.Errorf("logged %q with handlers=%s: no handler is running, a heartbeat's stop is", r.msg, r.attrs["handlers"])
	}
}

// A listener Close, a session Close and a registry's Unregister and Close
// all block: each is named.
func TestT20_3_EveryCulpritNamed(t *testing.T) {
	g := faultGate(t)
	cat := testCatalogs(t)
	reg := withFaultRegistry(t, cat, &faultRegistry{name: "t20reg", gate: g, unregister: block, close: block})
	tr := &faultTransport{name: "t20all", gate: g, sclose: block, lclose: block}
	p, _, e, _ := callOver(t, cat, tr, reg)
	err := shutdownWithin(t, p)
	addr := e.URL().Address()
	for _, want := range []string{
		`kernel: shutdown: registry "t20reg" Unregister of demo.Echo`,
		`kernel: shutdown: transport "t20all" session Close (the connection from `,
		`kernel: shutdown: transport "t20all" listener Close on ` + addr,
		`kernel: shutdown: registry "t20reg" Close`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Shutdown's error does not name %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "a session's Close or a heartbeat's stop") {
		t.Errorf("error %q: want each culprit named", err)
	}
}
