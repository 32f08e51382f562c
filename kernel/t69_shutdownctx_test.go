package kernel

import (
	"context"
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

// TestT69_ShutdownContextDeadlineIsNamed (tester69 finding 3): a
// Shutdown whose own context's deadline (300 ms) comes before
// shutdown.timeout (the default 10 s) abandons the call in flight; its
// consumer and the method's context.Cause were told "shutdown timeout
// passed", and an operator would raise shutdown.timeout for nothing.
// Both now name the context's deadline, as Shutdown's own error does.
func TestT69_ShutdownContextDeadlineIsNamed(t *testing.T) {
	ctx := ctxT(t)
	cat := testCatalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	svc := &causeSvc{started: make(chan struct{}, 1)}
	e, err := p.Export(ctx, svc, spi.MustParse("airnode://127.0.0.1:0/t69.Svc"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	ref := refer(t, c, "airnode://"+e.URL().Address()+"/t69.Svc?timeout=30s&retries=0")
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
	if serr == nil || !strings.Contains(serr.Error(), "context ended before its timeout") {
		t.Errorf("Shutdown: %v; want its context named", serr)
	}
	err = <-long
	const want = "the deadline of its Shutdown's context passed before its shutdown timeout"
	if spi.StatusOf(err) != spi.StatusServerError || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "shutdown timeout passed") {
		t.Errorf("the call in flight: %v; want SERVER_ERROR saying %q", err, want)
	}
}
