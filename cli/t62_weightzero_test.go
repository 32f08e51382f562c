package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/airnode/airnode/bench"
	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// tester62 finding 5: against providers all at weight 0, every call
// fails SERVICE_NOT_FOUND in this process, and bench's callers re-called
// at once: 230,000 failures a second at -c 2. They back off as when no
// provider is listed, and a counted run stops after deadStop.
func TestT62_WeightZeroProvidersBackOff(t *testing.T) {
	defer func(d time.Duration) { deadStop = d }(deadStop)
	deadStop = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reg := spi.MustParse("memory://" + t.Name())
	cat := bundle.Catalogs() // one catalog set: one memory namespace
	prov := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(reg), kernel.WithShutdownWait(0))
	defer prov.Close()
	if _, err := prov.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?weight=0")); err != nil {
		t.Fatal(err)
	}
	cons := kernel.NewNode(cat, kernel.WithLogger(quiet))
	defer cons.Close()
	ref, err := cons.Refer(ctx, spi.MustParse("airnode:///demo.Echo"), reg)
	if err != nil {
		t.Fatal(err)
	}
	for len(ref.Providers()) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the weight-0 provider was never listed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	cfg := bench.Config{Calls: 1 << 40, Concurrency: 2, Warmup: 0}
	r, err := benchAirnode(ctx, ref, &cutAttempts{}, cfg, benchCase{Req: 10, Resp: 10, Concurrency: 2}, "test", nil, 0, func(string, ...any) {})
	var stopped *stoppedError
	if !errors.As(err, &stopped) || r == nil {
		t.Fatalf("benchAirnode: %+v, %v; want the report and *stoppedError", r, err)
	}
	el := time.Since(start)
	if el > 15*time.Second {
		t.Fatalf("stopped after %v, want about deadStop (1 s)", el)
	}
	// backoff from 1 ms doubling to 100 ms: about 15 calls a caller in 1 s
	if n := sum(r.Errors); n == 0 || n > 200 || r.Errors["SERVICE_NOT_FOUND"] != n {
		t.Fatalf("errors %v in %v, want a few SERVICE_NOT_FOUND a second per caller, not a spin", r.Errors, el)
	}
	t.Logf("%v in %v; errors %v", err, el.Round(time.Millisecond), r.Errors)
}
