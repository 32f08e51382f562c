package kernel

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// hdrainSvc is a provider whose Slow call runs until release (or its
// context ends), telling started when it begins.
type hdrainSvc struct {
	started chan struct{}
	release chan struct{}
}

func (s *hdrainSvc) Slow(ctx context.Context) (string, error) {
	s.started <- struct{}{}
	select {
	case <-s.release:
		return "done", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (s *hdrainSvc) Ping() (string, error) { return "pong", nil }

// TestHDrainStopsAcceptingAfterWait: a provider shutting down with a call
// in flight still accepts new connections during shutdown.wait, refuses
// them once the wait is over (its listener closed), while the call in
// flight completes and its consumer, already connected, still has a new
// call served before the go-away (tester27 finding 5: the listener stayed
// open, serving new connections, for as long as a call was in flight).
func TestHDrainStopsAcceptingAfterWait(t *testing.T) {
	ctx := ctxT(t)
	cat := testCatalogs(t)
	const wait = 1500 * time.Millisecond
	// A registry, so that Shutdown waits (memory: this process's
	// consumers; the node registers in it).
	p := NewNode(cat, WithLogger(quiet), WithRegistry(spi.MustParse("memory://hdrain")),
		WithShutdownWait(wait), WithShutdownTimeout(20*time.Second))
	defer p.Close()
	svc := &hdrainSvc{started: make(chan struct{}, 1), release: make(chan struct{})}
	e, err := p.Export(ctx, svc, spi.MustParse("airnode://127.0.0.1:0/hdrain.Svc"))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.URL().Address()

	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	ref, err := c.Refer(ctx, spi.MustParse("airnode://"+addr+"/hdrain.Svc?timeout=30s&retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	long := make(chan error, 1)
	go func() {
		var s string
		err := ref.Call(ctx, "Slow", nil, &s)
		if err == nil && s != "done" {
			err = errors.New("Slow answered " + s)
		}
		long <- err
	}()
	select {
	case <-svc.started:
	case <-ctx.Done():
		t.Fatal("Slow did not start")
	}

	begun := time.Now()
	shut := make(chan error, 1)
	go func() { shut <- p.Shutdown(context.Background()) }()

	// During shutdown.wait the provider still accepts (README: the
	// listener closes after the wait).
	time.Sleep(wait / 5)
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("a new connection %v into shutdown.wait (%v): %v; want accepted", time.Since(begun).Round(time.Millisecond), wait, err)
	}
	conn.Close()

	// Past the wait, with the call still in flight: a new connection is
	// refused.
	time.Sleep(time.Until(begun.Add(wait + time.Second)))
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Fatalf("a new connection %v after Shutdown began (shutdown.wait %v, a call in flight) was accepted; want refused",
			time.Since(begun).Round(time.Millisecond), wait)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a new connection after the wait: %v; want connection refused", err)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with a call in flight", err)
	default:
	}

	// The consumer already connected still has a new call served during
	// the drain (the go-away comes after it).
	var pong string
	if err := ref.Call(ctx, "Ping", nil, &pong); err != nil || pong != "pong" {
		t.Fatalf("Ping on the existing connection during the drain: %q, %v; want pong", pong, err)
	}

	close(svc.release)
	if err := <-long; err != nil {
		t.Fatalf("the call in flight at Shutdown: %v; want it to complete", err)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return 10 s after the last call ended")
	}
}
