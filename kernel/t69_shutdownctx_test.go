package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// causeSvc's Slow waits for its context and returns its cause.
type causeSvc struct{ started chan struct{} }

func (s *causeSvc) Slow(ctx context.Context) (string, error) {
	s.started <- struct{}{}
	<-ctx.Done()
	return "", context.Cause(ctx)
}

// causePair exports a causeSvc on a new provider node and refers to it
// directly from a new consumer node (timeout=30s, retries=0); both nodes
// close when t ends.
func causePair(t *testing.T, ctx context.Context) (*Node, *causeSvc, *Reference) {
	t.Helper()
	cat := testCatalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { p.Close() })
	svc := &causeSvc{started: make(chan struct{}, 1)}
	e, err := p.Export(ctx, svc, spi.MustParse("airnode://127.0.0.1:0/t69.Svc"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	t.Cleanup(func() { c.Close() })
	return p, svc, refer(t, c, "airnode://"+e.URL().Address()+"/t69.Svc?timeout=30s&retries=0")
}

// TestT69_ShutdownContextDeadlineIsNamed (tester69 finding 3): a
// Shutdown whose own context's deadline (300 ms) comes before
// shutdown.timeout (the default 10 s) abandons the call in flight; its
// consumer and the method's context.Cause were told "shutdown timeout
// passed", and an operator would raise shutdown.timeout for nothing.
// Both now name the context's deadline, as Shutdown's own error does.
func TestT69_ShutdownContextDeadlineIsNamed(t *testing.T) {
	ctx := ctxT(t)
	p, svc, ref := causePair(t, ctx)
	long := make(chan error, 1)
	go func() { long <- ref.Call(ctx, "Slow", nil, new(string)) }()
	select {
	case <-svc.started:
	case <-ctx.Done():
		t.Fatal("Slow did not start")
	}
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	serr := p.Shutdown(sctx)
	if serr == nil || !strings.Contains(serr.Error(), "before the caller's context deadline passed") {
		t.Errorf("Shutdown: %v; want its context named", serr)
	}
	err := <-long
	const want = "the deadline of its Shutdown's context passed before its shutdown timeout"
	if spi.StatusOf(err) != spi.StatusServerError || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "shutdown timeout passed") {
		t.Errorf("the call in flight: %v; want SERVER_ERROR saying %q", err, want)
	}
}

// TestT69_SecondPortZeroExportSaysThePortIsShared (tester69 finding 2):
// a node's later exports to port 0 on a host share its first one's
// port, so the same service exported there twice fails; the error says
// why and what to do, not only "already exported".
func TestT69_SecondPortZeroExportSaysThePortIsShared(t *testing.T) {
	ctx := ctxT(t)
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	u := spi.MustParse("airnode://127.0.0.1:0/t69.Svc")
	if _, err := p.Export(ctx, &causeSvc{}, u); err != nil {
		t.Fatal(err)
	}
	_, err := p.Export(ctx, &causeSvc{}, u)
	if err == nil || !strings.Contains(err.Error(), "already exported on 127.0.0.1:") || !strings.Contains(err.Error(), "port 0 is the free port this node's first export to port 0") {
		t.Fatalf("second export to port 0: %v; want it to say the port is shared", err)
	}
}

// TestT69_ExportWithADoneContextFails (tester69 finding 5): Export with
// a cancelled context registered and served while Refer with one failed;
// now Export fails too, with ctx's error, and nothing is registered.
func TestT69_ExportWithADoneContextFails(t *testing.T) {
	reg := spi.MustParse("file://" + t.TempDir())
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	defer p.Close()
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Export(dead, &causeSvc{}, spi.MustParse("airnode://127.0.0.1:0/t69.Svc"))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing listened or registered") {
		t.Fatalf("Export with a cancelled context: %v; want context.Canceled, nothing registered", err)
	}
	c := NewNode(testCatalogs(t), WithLogger(quiet), WithRegistry(reg))
	defer c.Close()
	ref, err := c.Refer(ctxT(t), spi.MustParse("airnode:///t69.Svc"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ref.Providers()); n != 0 {
		t.Fatalf("%d providers listed after the refused export", n)
	}
}

// TestT69_MethodLevelBalancerCheckedAtRefer (tester69 finding 6): an
// unknown method-level balancer passed Refer, then failed every call of
// the method; it fails Refer now, listing the available ones, as the
// service-level key does.
func TestT69_MethodLevelBalancerCheckedAtRefer(t *testing.T) {
	c := NewNode(testCatalogs(t), WithLogger(quiet))
	defer c.Close()
	for _, q := range []string{"methods.Slow.loadbalance=nu69.nope", "methods.Slow.cluster=nu69.nope"} {
		_, err := c.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/t69.Svc?"+q), spi.URL{})
		if err == nil || !strings.Contains(err.Error(), `"nu69.nope"`) || !strings.Contains(err.Error(), "available") {
			t.Errorf("Refer with %s: %v; want the unknown name and the available ones", q, err)
		}
	}
	ref, err := c.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/t69.Svc?methods.Slow.loadbalance=roundrobin"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := ref.strategyFor("Slow"); err != nil || s.lbName != "roundrobin" {
		t.Fatalf("Slow's strategy: %+v, %v; want roundrobin", s, err)
	}
}

// TestT69_CallerContextCauseIsKept (tester69 finding 4): a caller's
// context.WithCancelCause / WithTimeoutCause cause was dropped from the
// call's error; errors.Is finds it now, before the call and during it,
// and context.Canceled / DeadlineExceeded still match.
func TestT69_CallerContextCauseIsKept(t *testing.T) {
	ctx := ctxT(t)
	_, svc, ref := causePair(t, ctx)
	mine := errors.New("user pressed stop")

	// cancelled before the call
	cctx, cancel := context.WithCancelCause(ctx)
	cancel(mine)
	err := ref.Call(cctx, "Slow", nil, new(string))
	if !errors.Is(err, mine) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "(cause: user pressed stop)") {
		t.Errorf("cancelled before: %v; want the cause kept", err)
	}
	// a deadline cause, before the call
	tctx, tcancel := context.WithTimeoutCause(ctx, time.Nanosecond, mine)
	defer tcancel()
	time.Sleep(time.Millisecond)
	if err := ref.Call(tctx, "Slow", nil, new(string)); !errors.Is(err, mine) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline before: %v; want the cause kept", err)
	}
	// cancelled during the call
	mctx, mcancel := context.WithCancelCause(ctx)
	done := make(chan error, 1)
	go func() { done <- ref.Call(mctx, "Slow", nil, new(string)) }()
	<-svc.started
	mcancel(mine)
	if err := <-done; !errors.Is(err, mine) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled during: %v; want the cause kept", err)
	}
}
