package push_test

import (
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
