package kernel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// heldService's Hold notes its start and returns when release is closed
// (or its ctx ends): a call that runs as long as the test needs.
type heldService struct {
	started chan struct{}
	release chan struct{}
}

func (s *heldService) Hold(ctx context.Context) (string, error) {
	s.started <- struct{}{}
	select {
	case <-s.release:
		return "held", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Issue 8 item 4: connection.concurrency=2 on the provider → of five
// concurrent held calls on one connection, two run and three get
// SERVER_THREADPOOL_EXHAUSTED naming the limit; a second consumer node (its
// own connection) runs two calls at once meanwhile. The calls that run are
// held until the rejections have come, not for a fixed time: on a loaded
// machine the third call once reached the provider after the first two
// (1 s sleeps) had ended, and ran.
func TestExportConnectionConcurrency(t *testing.T) {
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	svc := &heldService{started: make(chan struct{}, 10), release: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(svc.release)
		}
	}
	defer release()
	e, err := p.Export(ctxT(t), svc, spi.MustParse("airnode://127.0.0.1:0/t.Held?connection.concurrency=2"))
	if err != nil {
		t.Fatal(err)
	}
	u := "airnode://" + e.URL().Address() + "/t.Held?cluster=failfast&timeout=20s"
	a, b := refer(t, consumer(t), u), refer(t, consumer(t), u)
	eventually(t, "both consumers connected", func() bool { return len(a.Providers()) == 1 && len(b.Providers()) == 1 })
	ctx := ctxT(t)
	starts := func(want int, who string) {
		t.Helper()
		for i := range want {
			select {
			case <-svc.started:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: %d of %d calls started within 10 s", who, i, want)
			}
		}
	}
	errs := make(chan error, 5)
	for range 5 {
		go func() {
			var s string
			errs <- a.Call(ctx, "Hold", nil, &s)
		}()
	}
	// Two of a's calls run (held); the three others are rejected.
	starts(2, "a's connection")
	for i := range 3 {
		select {
		case err := <-errs:
			if spi.StatusOf(err) != spi.StatusServerThreadpoolExhausted || !strings.Contains(err.Error(), "connection limit 2 concurrent requests reached") {
				t.Errorf("Hold %d while two run: %v, want SERVER_THREADPOOL_EXHAUSTED naming the connection limit 2", i, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of a's 3 calls over the limit were answered within 10 s", i)
		}
	}
	// While a's two calls run, b's own connection runs two at once.
	bErrs := make(chan error, 2)
	for range 2 {
		go func() {
			var s string
			bErrs <- b.Call(ctx, "Hold", nil, &s)
		}()
	}
	starts(2, "the other consumer's connection")
	release()
	for range 2 {
		if err := <-bErrs; err != nil {
			t.Errorf("other consumer: %v", err)
		}
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("Hold, one of the two that ran: %v", err)
		}
	}
	select {
	case <-svc.started:
		t.Error("more than 4 calls reached the method")
	default:
	}
}

// A malformed connection.concurrency fails Export naming key and value.
func TestExportRejectsBadConnectionConcurrency(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	for _, v := range []string{"abc", "1.5", "9999999999"} {
		_, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?connection.concurrency="+v))
		if err == nil || !strings.Contains(err.Error(), v) || !strings.Contains(err.Error(), "connection.concurrency") {
			t.Errorf("connection.concurrency=%s: %v; want an error naming key and value", v, err)
		}
	}
}
