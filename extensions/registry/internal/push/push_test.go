package push_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/registry/internal/push"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFirstEmptyThenDedupAndCoalesce(t *testing.T) {
	var mu sync.Mutex
	var got [][]spi.URL
	release := make(chan struct{})
	first := make(chan struct{})
	p := push.New(func(l []spi.URL) {
		mu.Lock()
		got = append(got, l)
		n := len(got)
		mu.Unlock()
		if n == 1 {
			close(first)
			<-release // hold the goroutine: later pushes coalesce
		}
	})
	p.Push(nil)
	<-first
	a := spi.MustParse("airnode://h:1/x")
	b := spi.MustParse("airnode://h:2/x")
	p.Push([]spi.URL{a})
	p.Push([]spi.URL{b, a})
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.Push([]spi.URL{a, b}) // equal to the last delivered: dropped
	time.Sleep(50 * time.Millisecond)
	p.Stop()
	p.Stop()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] == nil || len(got[0]) != 0 || len(got[1]) != 2 || got[1][0].Port() != 1 {
		t.Fatalf("deliveries = %v", got)
	}
}

// Wait returns true once what was pushed before it has been delivered (or
// dropped as equal), false when ctx ends first or the Pusher stops.
func TestWaitForDelivery(t *testing.T) {
	var mu sync.Mutex
	var got []spi.URL
	release := make(chan struct{}, 10)
	p := push.New(func(l []spi.URL) {
		<-release
		mu.Lock()
		got = l
		mu.Unlock()
	})
	if !p.Wait(context.Background()) {
		t.Fatal("Wait with nothing pushed: false")
	}
	a := spi.MustParse("airnode://h:1/x")
	p.Push([]spi.URL{a})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	if p.Wait(ctx) {
		t.Fatal("Wait while notify is blocked: true")
	}
	cancel()
	release <- struct{}{}
	if !p.Wait(context.Background()) {
		t.Fatal("Wait after the delivery: false")
	}
	mu.Lock()
	n := len(got)
	mu.Unlock()
	if n != 1 {
		t.Fatalf("delivered %d providers, want 1", n)
	}
	p.Push([]spi.URL{a}) // equal to the last one: dropped, and Wait says so
	if !p.Wait(context.Background()) {
		t.Fatal("Wait after a dropped push: false")
	}
	release <- struct{}{} // the next notify does not block
	p.Push(nil)
	stopped := make(chan struct{})
	go func() { p.Stop(); close(stopped) }()
	p.Wait(context.Background()) // the stop or the delivery ends it, whichever wins
	<-stopped
	if p.Wait(context.Background()) && len(release) == 1 {
		t.Fatal("Wait after Stop with a push never delivered: true")
	}
}
