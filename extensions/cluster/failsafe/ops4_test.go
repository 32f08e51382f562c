package failsafe_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// unwell is a demo.Echo whose Fail answers SERVER_ERROR (the node says it
// is unwell: a framework failure failsafe swallows, not a business error).
type unwell struct{}

func (unwell) Fail(ctx context.Context, msg string) error {
	return spi.Errorf(spi.StatusServerError, "%s", msg)
}

// tester33 F1: a provider whose method fails, called through a
// cluster=failsafe reference by 8 callers for 1 s (thousands of swallowed
// failures): the consumer's log has a dozen WARN lines for them, not one
// per call, each naming the service, method, provider and status, and
// those after the first carry suppressed and in_burst adding up to the
// calls swallowed so far.
func TestOps4SwallowedFailuresAreRateBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	pn := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	defer pn.Close()
	e, err := pn.Export(ctx, unwell{}, spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	cn := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), kernel.WithShutdownWait(0))
	defer cn.Close()
	r, err := cn.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?cluster=failsafe&timeout=5s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// A burst of 1,000 failed calls, or what 8 callers make in 8 s on a
	// loaded machine (under 10 s: the rate bound's one line per 10 s does
	// not come in).
	var wg sync.WaitGroup
	var calls [8]int
	var total atomic.Int64
	var errs sync.Map
	stop := time.Now().Add(8 * time.Second)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) && total.Load() < 1000 {
				if _, err := r.Invoke(ctx, "Fail", "database connection lost"); err != nil {
					errs.Store(g, err)
					return
				}
				calls[g]++
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	errs.Range(func(_, v any) bool { t.Errorf("failsafe returned an error: %v", v); return false })
	n := 0
	for _, c := range calls {
		n += c
	}
	if n < 200 {
		t.Fatalf("only %d calls in 8 s; the test needs a burst", n)
	}
	lines, last, err := logbuf.Burst(logs.String(), "call failed, returning the zero result")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) > 13 || last > int64(n) {
		t.Fatalf("%d failsafe lines, last in_burst %d, for %d swallowed calls; want at most 13 (first, doublings to 1,024, one per 10 s)", len(lines), last, n)
	}
	for _, l := range lines {
		for _, want := range []string{"level=WARN", "service=demo.Echo", "method=Fail", "provider=" + e.URL().Address(), "status=SERVER_ERROR", "database connection lost"} {
			if !strings.Contains(l, want) {
				t.Errorf("line %q lacks %q", l, want)
			}
		}
	}
	t.Logf("%d swallowed calls, %d lines; last: %s", n, len(lines), lines[len(lines)-1])
}
