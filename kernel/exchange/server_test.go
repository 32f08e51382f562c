package exchange

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestServerShutdownDrains: Shutdown stops accepting, lets every in-flight
// request finish, then closes the channels.
func TestServerShutdownDrains(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	const n = 20
	errs := make(chan error, n)
	for range n {
		go func() { errs <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 300), 10*time.Second).Err }()
	}
	if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == n }) {
		t.Fatalf("in flight %d", f.srv.InFlight())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("in-flight call failed during shutdown: %v", err)
		}
	}
	if f.srv.InFlight() != 0 {
		t.Fatalf("in flight %d after shutdown", f.srv.InFlight())
	}
	if err := <-f.errc; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	f.errc <- nil // for the fixture's cleanup
	select {
	case <-ch.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("consumer channel still open after shutdown")
	}
	if c, err := net.DialTimeout("tcp", f.addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("server still accepting after shutdown")
	}
}

func TestServerShutdownDeadline(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	errc := make(chan error, 1)
	go func() {
		errc <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 20000), 30*time.Second).Err
	}()
	waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := f.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown: %v, want deadline exceeded", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Shutdown took %v", d)
	}
	// the call read before the go-away and cut short is answered before
	// the close (docs/wire.md, Shutdown step 5), not lost with it
	wantStatus(t, <-errc, spi.StatusServerError)
	f.srv.Close() // idempotent after Shutdown
}

func TestServerCloseIdempotent(t *testing.T) {
	f := startServer(t, true, nil)
	ch := f.dial(nil)
	if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), time.Second); res.Err != nil {
		t.Fatal(res.Err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); f.srv.Close() }()
	}
	wg.Wait()
	<-ch.Done()
}

// TestLargeResponsesOwnStreams: on a multiplexed session, 4 MiB responses
// travel on streams of their own while small calls keep flowing.
func TestLargeResponsesOwnStreams(t *testing.T) {
	f := startServer(t, true, nil)
	ch := f.dial(nil)
	ctx := context.Background()
	stop := make(chan struct{})
	bigErr := make(chan error, 1)
	go func() {
		var err error
		for i := 0; err == nil; i++ {
			select {
			case <-stop:
				bigErr <- nil
				return
			default:
			}
			var b []byte
			inv := echoInv("Payload", 4<<20)
			inv.Reply = &b
			if res := ch.Invoke(ctx, mpCodec{}, inv, 10*time.Second); res.Err != nil {
				err = res.Err
			} else if len(b) != 4<<20 {
				err = errors.New("short payload")
			}
		}
		bigErr <- err
	}()
	var lat []time.Duration
	for i := range 300 {
		start := time.Now()
		if res := ch.Invoke(ctx, mpCodec{}, echoInv("Echo", i), 5*time.Second); res.Err != nil || toInt(res.Value) != i {
			t.Fatalf("small call %d: %+v", i, res)
		}
		lat = append(lat, time.Since(start))
	}
	close(stop)
	if err := <-bigErr; err != nil {
		t.Fatal(err)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var prov *Channel
	f.srv.mu.Lock()
	for c := range f.srv.chans {
		prov = c
	}
	f.srv.mu.Unlock()
	if prov.Stats().OwnStreams == 0 {
		t.Fatalf("no response went on its own stream: %+v", prov.Stats())
	}
	t.Logf("small calls next to 4 MiB responses: p50 %v p99 %v; provider %+v", lat[len(lat)/2], lat[len(lat)*99/100], prov.Stats())
}

// TestIdleConnectionCost logs the memory one idle connection costs, both
// ends together (consumer and provider channel, single-stream session), as
// heap plus goroutine stacks. Informational: the bound is for the
// provider alone with a real transport, measured by RSS.
func TestIdleConnectionCost(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	f := startServer(t, false, nil)
	const n = 300
	chans := make([]*Channel, 0, n)
	mem := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc + m.StackInuse
	}
	before := mem()
	for range n {
		ch := NewChannel(dialSession(t, f.addr(), false), Options{Side: spi.Consumer, Codec: codecByID})
		if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", 1), 5*time.Second); res.Err != nil {
			t.Fatal(res.Err)
		}
		chans = append(chans, ch)
	}
	time.Sleep(workerIdle + 500*time.Millisecond) // provider workers go idle and exit
	after := mem()
	t.Logf("idle connection: %d bytes for both ends (heap + stacks)", (int64(after)-int64(before))/n)
	for _, ch := range chans {
		ch.Close("done")
		ch.Wait()
	}
}

// TestShutdownSendsReadOnly: Server.Shutdown tells each consumer at once
// that the provider is going away (Dubbo's READONLY_EVENT), while calls in
// flight still complete.
func TestShutdownSendsReadOnly(t *testing.T) {
	for _, mux := range []bool{false, true} {
		f := startServer(t, mux, nil)
		ch := f.dial(nil)
		if ch.ReadOnly() {
			t.Fatal("read-only before shutdown")
		}
		errc := make(chan error, 1)
		go func() { errc <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Sleep", 1500), 10*time.Second).Err }()
		if !waitFor(5*time.Second, func() bool { return f.srv.InFlight() == 1 }) {
			t.Fatal("call never arrived")
		}
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done <- f.srv.Shutdown(ctx)
		}()
		if !waitFor(1200*time.Millisecond, ch.ReadOnly) {
			t.Fatalf("mux=%v: consumer not read-only while the provider drains", mux)
		}
		select {
		case err := <-errc:
			t.Fatalf("mux=%v: the in-flight call ended (%v) before the consumer saw read-only", mux, err)
		default:
		}
		if err := <-errc; err != nil {
			t.Fatalf("mux=%v: in-flight call: %v", mux, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		<-f.errc
		f.errc <- nil
	}
}
