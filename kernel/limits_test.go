package kernel

import (
	"strings"
	"sync"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// Issue 8 item 4: connection.concurrency=2 on the provider → of five
// concurrent slow calls on one connection, two run and three get
// SERVER_THREADPOOL_EXHAUSTED naming the limit; a second consumer node (its
// own connection) is unaffected.
func TestExportConnectionConcurrency(t *testing.T) {
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?connection.concurrency=2"))
	if err != nil {
		t.Fatal(err)
	}
	u := "airnode://" + e.URL().Address() + "/demo.Echo?cluster=failfast&timeout=10s"
	a, b := refer(t, consumer(t), u), refer(t, consumer(t), u)
	if _, err := a.Invoke(ctxT(t), "Echo", 1); err != nil { // connect first
		t.Fatal(err)
	}
	ctx := ctxT(t)
	errs := make(chan error, 5)
	for range 5 {
		go func() {
			var ms int
			errs <- a.Call(ctx, "Sleep", []any{1000}, &ms)
		}()
	}
	// While a's calls run, b's own connection serves two concurrent calls.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			var ms int
			if err := b.Call(ctx, "Sleep", []any{50}, &ms); err != nil {
				t.Errorf("other consumer: %v", err)
			}
		})
	}
	wg.Wait()
	ok, rejected := 0, 0
	for range 5 {
		err := <-errs
		switch {
		case err == nil:
			ok++
		case spi.StatusOf(err) == spi.StatusServerThreadpoolExhausted && strings.Contains(err.Error(), "connection limit 2 concurrent requests reached"):
			rejected++
		default:
			t.Errorf("Sleep: %v", err)
		}
	}
	if ok != 2 || rejected != 3 {
		t.Fatalf("ok=%d rejected=%d, want 2 and 3", ok, rejected)
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
